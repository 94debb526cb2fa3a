"""One 1024-thread block per row."""


def launch(gpu, logits, temperature, top_p, u, token, R, V):
    gpu.launch("top_p_sample", grid=R, block=1024, args=(logits, temperature, top_p, u, token, V))

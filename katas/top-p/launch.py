"""Default launch plan for the top-p stub: one 256-thread block per row."""


def launch(gpu, logits, temperature, top_p, u, token, R, V):
    gpu.launch("top_p_sample", grid=R, block=256, args=(logits, temperature, top_p, u, token, V))

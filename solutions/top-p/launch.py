"""Launch plan of the top-p solution: one 1024-thread block per row (256 rows fill the H200's 132 SMs twice)."""


def launch(gpu, logits, temperature, top_p, u, token, R, V):
    gpu.launch("top_p_sample", grid=R, block=1024, args=(logits, temperature, top_p, u, token, V))

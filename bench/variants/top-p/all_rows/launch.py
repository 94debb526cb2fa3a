"""top-p variant: every row in flight at once (grid = R), its logits re-read from DRAM by each pass."""


def launch(gpu, logits, temperature, top_p, u, token, R, V):
    gpu.launch("top_p_sample", grid=R, block=1024, args=(logits, temperature, top_p, u, token, R, V))

"""Default launch plan for the attention stub: one thread per query row, B·H rows of blocks."""


def launch(gpu, Q, K, V, O, B, H, S, D, causal):
    threads = 64
    gpu.launch("attention", grid=(gpu.cdiv(S, threads), B * H), block=threads,
               args=(Q, K, V, O, S, D, causal))

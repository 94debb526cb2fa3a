"""Default launch plan for the flash-prefill stub: one thread per query row, 128 rows a block,
one grid row per (batch, head)."""


def launch(gpu, Q, K, V, O, B, H, S, D, causal):
    gpu.launch("flash_prefill", grid=(gpu.cdiv(S, 128), B * H), block=128, args=(Q, K, V, O, S, D, causal))

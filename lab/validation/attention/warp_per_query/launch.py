"""One warp per query row, 4 warps per block, blockIdx.y over batch x head."""


def launch(gpu, Q, K, V, O, B, H, S, D, causal):
    gpu.launch("attention", grid=(gpu.cdiv(S, 4), B * H), block=128, args=(Q, K, V, O, S, D, causal))

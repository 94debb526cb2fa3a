"""One thread per query row, 64 per block, blockIdx.y over batch x head."""


def launch(gpu, Q, K, V, O, B, H, S, D, causal):
    gpu.launch("attention", grid=(gpu.cdiv(S, 64), B * H), block=64, args=(Q, K, V, O, S, D, causal))

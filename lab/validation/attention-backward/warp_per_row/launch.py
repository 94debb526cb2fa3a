"""grad_kv then grad_q, one warp per row, 4 warps per block; blockIdx.y over batch x head."""


def launch(gpu, Q, K, V, O, dO, LSE, dQ, dK, dV, B, H, S, D, causal):
    grid = (gpu.cdiv(S, 4), B * H)
    gpu.launch("grad_kv", grid=grid, block=128, args=(Q, K, V, O, dO, LSE, dK, dV, S, D, causal))
    gpu.launch("grad_q", grid=grid, block=128, args=(Q, K, V, O, dO, LSE, dQ, S, D, causal))

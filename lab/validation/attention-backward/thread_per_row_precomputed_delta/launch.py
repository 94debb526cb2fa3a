"""row_delta, grad_kv, grad_q: one thread per row, 64 per block; blockIdx.y over batch x head."""


def launch(gpu, Q, K, V, O, dO, LSE, dQ, dK, dV, B, H, S, D, causal):
    grid = (gpu.cdiv(S, 64), B * H)
    delta = gpu.empty(B * H * S, "float32")
    gpu.launch("row_delta", grid=grid, block=64, args=(O, dO, delta, S, D))
    gpu.launch("grad_kv", grid=grid, block=64, args=(Q, K, V, dO, LSE, delta, dK, dV, S, D, causal))
    gpu.launch("grad_q", grid=grid, block=64, args=(Q, K, V, dO, LSE, delta, dQ, S, D, causal))

"""Default launch plan for the attention-backward stub: grad_kv with one thread per key row, then
grad_q with one thread per query row; blockIdx.y is the (batch, head) index."""


def launch(gpu, Q, K, V, O, dO, LSE, dQ, dK, dV, B, H, S, D, causal):
    threads = 64
    grid = (gpu.cdiv(S, threads), B * H)
    gpu.launch("grad_kv", grid=grid, block=threads, args=(Q, K, V, O, dO, LSE, dK, dV, S, D, causal))
    gpu.launch("grad_q", grid=grid, block=threads, args=(Q, K, V, O, dO, LSE, dQ, S, D, causal))

"""Launch plan of the attention-backward solution: D_i = dO_i·O_i, then grad_kv (a block per key
tile) and grad_q (a block per query tile), kernels by head size."""

# head size -> (grad_kv's query tile, its key tile, grad_q's query tile, its key tile); kernel.cu's ENTRIES
TILES = {32: (64, 64, 64, 64), 64: (64, 64, 64, 64), 128: (32, 64, 64, 32)}


def _kv_shared(D, bq, bkv):  # Kt, Vt [D][bkv+4], PS [bq][bkv+4], Qs, dOs [bq][D+1], lse2, Dv [bq]
    return 4 * (2 * D * (bkv + 4) + bq * (bkv + 4) + 2 * bq * (D + 1) + 2 * bq)


def _q_shared(D, bq, bkv):  # Qt, dOt [D][bq+4], dSt [bkv][bq+4], Ks, Vs [bkv][D+1], lse2, Dv [bq]
    return 4 * (2 * D * (bq + 4) + bkv * (bq + 4) + 2 * bkv * (D + 1) + 2 * bq)


def launch(gpu, Q, K, V, O, dO, LSE, dQ, dK, dV, B, H, S, D, causal):
    rows = B * H * S
    dvec = gpu.empty(rows, "float32")
    gpu.launch("row_dot", grid=gpu.cdiv(rows, 8), block=256, args=(dO, O, dvec, rows, D))  # a warp per row
    kv_bq, kv_bkv, q_bq, q_bkv = TILES[D]
    gpu.launch(f"grad_kv_d{D}", grid=(gpu.cdiv(S, kv_bkv), B * H), block=4 * kv_bkv,
               shared=_kv_shared(D, kv_bq, kv_bkv), args=(Q, K, V, dO, LSE, dvec, dK, dV, S, causal))
    gpu.launch(f"grad_q_d{D}", grid=(gpu.cdiv(S, q_bq), B * H), block=4 * q_bq,
               shared=_q_shared(D, q_bq, q_bkv), args=(Q, K, V, dO, LSE, dvec, dQ, S, causal))

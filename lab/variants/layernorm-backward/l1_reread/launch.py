"""Launch plan of the l1_reread variant (the layernorm-backward solution before the cp.async ring): rows into per-block partials, then columns."""

MIN_ROWS_PER_BLOCK = 16  # keeps the G x C workspace's traffic under a tenth of the compulsory bytes


def _pow2_at_least(n):
    p = 32
    while p < n:
        p *= 2
    return p


def launch(gpu, dy, x, mean, rstd, gamma, dx, dgamma, dbeta, R, C):
    per_thread = 8 if C <= 4096 else 16  # lnb_rows8 takes at most 512 threads
    threads = min(1024, _pow2_at_least(gpu.cdiv(C, per_thread)))
    # Persistent: about as many blocks as fit on the GPU at once (2048 threads per SM), each with
    # at least MIN_ROWS_PER_BLOCK rows when R allows.
    resident = gpu.device.sm_count * max(1, 2048 // threads)
    G = max(1, min(resident, gpu.cdiv(R, MIN_ROWS_PER_BLOCK)))
    ws_gamma = gpu.empty(G * C, "float32")
    ws_beta = gpu.empty(G * C, "float32")
    gpu.launch(f"lnb_rows{per_thread}", grid=G, block=threads,
               args=(dy, x, mean, rstd, gamma, dx, ws_gamma, ws_beta, R, C))
    gpu.launch("lnb_columns", grid=gpu.cdiv(C, 32), block=(32, 8), args=(ws_gamma, ws_beta, G, C, dgamma, dbeta))

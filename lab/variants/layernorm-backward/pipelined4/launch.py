"""Launch plan of the pipelined4 variant: rows into per-block partials (cp.async ring when C % 4 == 0
and C <= 4096, else the solution's kernels), then the column sums."""

STAGES, BLOCKS_PER_SM = 4, 1  # lnb_pipe4: three rows in flight per block, one block per SM
MIN_ROWS_PER_BLOCK = 16  # keeps the G x C workspace's traffic under a tenth of the compulsory bytes
COLUMNS_PER_THREAD = 8  # 2 float4 of each row per thread


def _pow2_at_least(n):
    p = 32
    while p < n:
        p *= 2
    return p


def launch(gpu, dy, x, mean, rstd, gamma, dx, dgamma, dbeta, R, C):
    piped = C % 4 == 0 and C <= 512 * COLUMNS_PER_THREAD
    per_thread = COLUMNS_PER_THREAD if C <= 4096 else 16
    threads = min(1024, _pow2_at_least(gpu.cdiv(C, per_thread)))
    per_sm = BLOCKS_PER_SM if piped else max(1, 2048 // threads)
    G = max(1, min(gpu.device.sm_count * per_sm, gpu.cdiv(R, MIN_ROWS_PER_BLOCK)))
    # The ring (STAGES rows of dy and x) and every row's (mean, rstd) of the block.
    shared = STAGES * 2 * C * 4 + gpu.cdiv(R, G) * 8
    if shared > gpu.device.max_shared_per_block_optin:
        piped = False
    ws_gamma = gpu.empty(G * C, "float32")
    ws_beta = gpu.empty(G * C, "float32")
    args = (dy, x, mean, rstd, gamma, dx, ws_gamma, ws_beta, R, C)
    if piped:
        gpu.launch(f"lnb_pipe{STAGES}", grid=G, block=threads, args=args, shared=shared)
    else:
        gpu.launch(f"lnb_rows{per_thread}", grid=G, block=threads, args=args)
    gpu.launch("lnb_columns", grid=gpu.cdiv(C, 32), block=(32, 16), args=(ws_gamma, ws_beta, G, C, dgamma, dbeta))

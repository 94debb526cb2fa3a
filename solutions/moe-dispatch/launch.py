"""Launch plan of the moe-dispatch solution: ranks per chunk, a scan per expert, a warp per token."""

CHUNK = 256  # assignments per moe_rank block (kernel.cu)


def launch(gpu, topk_ids, x, counts, offsets, perm, gathered, N, E, D):
    chunks = gpu.cdiv(2 * N, CHUNK)
    chunk_hist = gpu.empty(chunks * E, "int32")  # per chunk and expert: count, then base
    rank = gpu.empty(2 * N, "int32")  # each assignment's rank among its expert's in the chunk
    gpu.launch("moe_rank", grid=chunks, block=CHUNK, shared=4 * (CHUNK // 32) * E,
               args=(topk_ids, chunk_hist, rank, N, E))
    gpu.launch("moe_scan", grid=1, block=1024, args=(chunk_hist, counts, offsets, chunks, E))
    warps = 8  # tokens per block
    gpu.launch("moe_scatter", grid=gpu.cdiv(N, warps), block=32 * warps,
               args=(topk_ids, x, chunk_hist, rank, offsets, perm, gathered, N, E, D))

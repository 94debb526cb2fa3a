"""Launch plan of the wgmma fp8-gemm: tensor maps for A (M × K bytes) and B (N × K bytes), boxes of
128 k × 128 rows with the 128-byte swizzle the kernel's descriptors expect, and one block of 384
threads (a producer and two consumer warpgroups) per 128×128 tile of C on a 1-D grid (the kernel
groups tiles for L2 reuse). STAGES × 32 KB of shared memory plus 1 KB to align the ring to the
swizzle's 1024-byte atoms."""

STAGES, BM, BN, BK = 4, 128, 128, 128
SHARED = STAGES * (BM + BN) * BK + 1024


def launch(gpu, A, As, B, Bs, C, M, N, K):
    map_a = gpu.tensor_map(A, global_dim=(K, M), global_strides=(K,), box_dim=(BK, BM), swizzle="128B")
    map_b = gpu.tensor_map(B, global_dim=(K, N), global_strides=(K,), box_dim=(BK, BN), swizzle="128B")
    gpu.launch("fp8_gemm", grid=gpu.cdiv(M, BM) * gpu.cdiv(N, BN), block=384,
               args=(map_a, As, map_b, Bs, C, M, N, K), shared=SHARED)

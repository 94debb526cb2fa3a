"""Launch plan of the wgmma tc-gemm: when K and N are multiples of 8 (TMA's 16-byte row strides),
tensor maps for A (box BK × BM, K-major) and B (box 64 × BK, N contiguous), both with the 128-byte
swizzle the kernel's wgmma descriptors expect, and one block of 128 × (CONSUMERS + 1) threads per
BM × BN tile of C on a 1-D grid (the kernel groups tiles for L2 reuse). STAGES × (BM + BN) × BK × 2
bytes of shared memory plus 1 KB to align the ring to the swizzle's 1024-byte atoms. Other shapes:
tc_gemm_any, one thread per element of C."""

BN, STAGES, CONSUMERS, BK = 256, 4, 2, 64
BM = 64 * CONSUMERS
SHARED = STAGES * (BM + BN) * BK * 2 + 1024


def launch(gpu, A, B, C, M, N, K):
    if K % 8 or N % 8:
        gpu.launch("tc_gemm_any", grid=(gpu.cdiv(N, 16), gpu.cdiv(M, 16)), block=(16, 16), args=(A, B, C, M, N, K))
        return
    map_a = gpu.tensor_map(A, global_dim=(K, M), global_strides=(2 * K,), box_dim=(BK, BM), swizzle="128B",
                           dtype="bfloat16")
    map_b = gpu.tensor_map(B, global_dim=(N, K), global_strides=(2 * N,), box_dim=(64, BK), swizzle="128B",
                           dtype="bfloat16")
    gpu.launch("tc_gemm", grid=gpu.cdiv(M, BM) * gpu.cdiv(N, BN), block=128 * (CONSUMERS + 1),
               args=(map_a, map_b, C, M, N, K), shared=SHARED)

"""The SGEMM ladder (six kernels) with alpha and beta: C is read and written, so it is uploaded."""
import numpy as np

from _corpus import case, cdiv_, close


@case("sgemm_ladder", kernels=6)
def sgemm_ladder(dev, rng):
    alpha, beta = np.float32(1.5), np.float32(-0.5)
    for name, (M, N, K), grid, block in (
            ("sgemm_naive", (37, 29, 23), lambda M, N: (cdiv_(M, 8), cdiv_(N, 8)), (8, 8)),
            ("sgemm_global_mem_coalesce", (37, 29, 23), lambda M, N: (cdiv_(M, 8), cdiv_(N, 8)), 64),
            ("sgemm_shared_mem_block", (37, 29, 23), lambda M, N: (cdiv_(N, 16), cdiv_(M, 16)), 256),
            ("sgemm1DBlocktiling", (64, 64, 32), lambda M, N: (N // 32, M // 32), 256),
            ("sgemm2DBlocktiling", (64, 32, 16), lambda M, N: (N // 32, M // 32), 64),
            ("sgemmVectorize", (64, 32, 16), lambda M, N: (N // 32, M // 32), 64)):
        A = rng.standard_normal((M, K)).astype(np.float32)
        B = rng.standard_normal((K, N)).astype(np.float32)
        C = rng.standard_normal((M, N)).astype(np.float32)
        pc = dev.upload(C)
        dev.launch(dev.kernel(name), grid(M, N), block,
                   [M, N, K, alpha, dev.upload(A), dev.upload(B), beta, pc])
        want = alpha * (A.astype(np.float64) @ B) + beta * C
        close(dev.read(pc, np.float32, M * N).reshape(M, N), want, 1e-5, 1e-4, name)

"""fp32 matrix multiply in Triton: C (M x N) = A (M x K) . B (K x N), row-major.

One program per BM x BN tile of C, walking K in steps of BK: a BM x BK tile of A and a BK x BN
tile of B are loaded (masked at the ragged edges, 0 outside) and multiplied with tl.dot in IEEE
fp32 (Triton's default for fp32 is tf32, whose 10-bit mantissa misses kata's fp32 bound).
"""
import triton
import triton.language as tl


@triton.jit
def matmul(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ks
        a = tl.load(A + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(B + k[:, None] * N + cols[None, :], mask=(k[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(C + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))

# C (M x N) = A (M x K) . B (K x N), float32, row-major, in Triton. `kata grade` compiles this
# file with triton.compile for the H200 (sm_90).
import triton
import triton.language as tl


@triton.jit
def matmul(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    # TODO: walk K in steps of BK: load a BM x BK tile of A and a BK x BN tile of B (masks at the edges).
    # TODO: accumulate their product in float32 (tl.dot; mind its input_precision for fp32).
    # TODO: store the BM x BN tile into C, masked at the edges.
    pass

"""Default launch plan for the Triton attention stub: one program per BM query rows of each (batch, head)."""
import math


def launch(gpu, Q, K, V, O, B, H, S, D, causal):
    BM, BN = 32, 32
    BD = 1 << max(D - 1, 1).bit_length()  # D rounded up to a power of two (tl.arange needs one)
    gpu.launch("attention", grid=(gpu.cdiv(S, BM), B * H), args=(Q, K, V, O, S, D, causal, 1.0 / math.sqrt(D)),
               num_warps=4, num_stages=1, constexprs=dict(BM=BM, BN=BN, BD=BD))

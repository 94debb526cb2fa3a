# Attention forward, O = softmax(Q K^T / sqrt(D)) V per (batch, head), optionally causal, in
# Triton. Q, K, V, O are [B, H, S, D] float32, row-major. `kata grade` compiles this file with
# triton.compile for the H200 (sm_90).
import triton
import triton.language as tl


@triton.jit
def attention(Q, K, V, O, S, D, causal, scale, BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr):
    start = tl.program_id(0) * BM  # this program's first query row
    head = tl.program_id(1)  # batch * H + head: offset head * S * D into each tensor
    # TODO: load the BM x BD tile of queries (masks for rows past S and dims past D).
    # TODO: stream the keys and values in tiles of BN: scores = q . k^T * scale (tl.dot), the causal
    #       and S masks, and an online softmax (running max and sum, rescaling the output when the max grows).
    # TODO: store the normalised output tile into O.
    pass

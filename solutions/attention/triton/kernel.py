"""Flash attention forward in Triton: O = softmax(Q K^T / sqrt(D)) V per (batch, head), optionally causal.

One program per BM query rows of one (batch, head). Q's tile stays in registers; K and V stream
through in tiles of BN keys. The softmax is online: per row a running max m and sum l, and when a
tile raises the max the accumulated output and l are rescaled by exp(m_old - m_new), so the S x S
score matrix never exists. Causal programs stop at their last row's diagonal. Both products are
tl.dot in IEEE fp32 (Triton's fp32 default, tf32, misses kata's bound).
"""
import triton
import triton.language as tl


@triton.jit
def attention(Q, K, V, O, S, D, causal, scale, BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr):
    start = tl.program_id(0) * BM
    base = tl.program_id(1).to(tl.int64) * S * D
    rows = start + tl.arange(0, BM)
    dims = tl.arange(0, BD)
    q = tl.load(Q + base + rows[:, None] * D + dims[None, :], mask=(rows[:, None] < S) & (dims[None, :] < D),
                other=0.0)
    m = tl.full([BM], -float("inf"), tl.float32)
    l = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, BD], dtype=tl.float32)
    end = tl.where(causal != 0, tl.minimum(S, start + BM), S)
    for kv in range(0, end, BN):
        keys = kv + tl.arange(0, BN)
        kt = tl.load(K + base + keys[None, :] * D + dims[:, None], mask=(keys[None, :] < S) & (dims[:, None] < D),
                     other=0.0)
        s = tl.dot(q, kt, input_precision="ieee") * scale
        valid = (keys[None, :] < S) & ((causal == 0) | (keys[None, :] <= rows[:, None]))
        s = tl.where(valid, s, -float("inf"))
        grown = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - grown[:, None])
        alpha = tl.exp(m - grown)
        l = l * alpha + tl.sum(p, axis=1)
        v = tl.load(V + base + keys[:, None] * D + dims[None, :], mask=(keys[:, None] < S) & (dims[None, :] < D),
                    other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m = grown
    out = acc / l[:, None]
    tl.store(O + base + rows[:, None] * D + dims[None, :], out, mask=(rows[:, None] < S) & (dims[None, :] < D))

"""Row softmax in Triton, one program per row.

A row that fits one tile (C <= BLOCK) is loaded once into registers: max, sum of exp, store, one
read and one write of HBM. A longer row takes the online recurrence over its tiles (a running
max per lane and a running sum rescaled when the max grows), then a second pass that re-reads the
row (from L2 at the bench sizes) to write it. Padding lanes load -inf, which exp turns into 0.
"""
import triton
import triton.language as tl


@triton.jit
def softmax(x, y, R, C, BLOCK: tl.constexpr, ONE_TILE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xr = x + row * C
    yr = y + row * C
    cols = tl.arange(0, BLOCK)
    if ONE_TILE:
        v = tl.load(xr + cols, mask=cols < C, other=-float("inf"))
        m = tl.max(v, axis=0)
        e = tl.exp(v - m)
        tl.store(yr + cols, e / tl.sum(e, axis=0), mask=cols < C)
    else:
        # C > BLOCK: the first tile is full, so every lane's running max is finite after it.
        m_lane = tl.full([BLOCK], -float("inf"), tl.float32)
        s_lane = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, C, BLOCK):
            v = tl.load(xr + start + cols, mask=start + cols < C, other=-float("inf"))
            grown = tl.maximum(m_lane, v)
            s_lane = s_lane * tl.exp(m_lane - grown) + tl.exp(v - grown)
            m_lane = grown
        m = tl.max(m_lane, axis=0)
        s = tl.sum(s_lane * tl.exp(m_lane - m), axis=0)
        for start in range(0, C, BLOCK):
            v = tl.load(xr + start + cols, mask=start + cols < C, other=-float("inf"))
            tl.store(yr + start + cols, tl.exp(v - m) / s, mask=start + cols < C)

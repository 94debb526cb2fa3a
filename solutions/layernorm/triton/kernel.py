"""LayerNorm forward in Triton, one program per row: mean, biased variance from the deviations
(never E[x^2] - E[x]^2, which float32 turns to noise for a row of mean 2000 and deviation 0.5),
rstd = 1 / sqrt(var + eps), y = (x - mean) * rstd * gamma + beta; mean and rstd are saved.

A row of up to 8192 floats is one tile held in registers: one read of x, one write of y. Longer
rows take three passes over tiles (sum, squared deviations, write); the re-reads hit L2.
"""
import triton
import triton.language as tl


@triton.jit
def layernorm(x, gamma, beta, y, mean, rstd, R, C, eps, BLOCK: tl.constexpr, ONE_TILE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xr = x + row * C
    yr = y + row * C
    cols = tl.arange(0, BLOCK)
    if ONE_TILE:
        inside = cols < C
        v = tl.load(xr + cols, mask=inside, other=0.0)
        mu = tl.sum(v, axis=0) / C
        d = tl.where(inside, v - mu, 0.0)
        rs = 1.0 / tl.sqrt_rn(tl.sum(d * d, axis=0) / C + eps)
        g = tl.load(gamma + cols, mask=inside, other=0.0)
        b = tl.load(beta + cols, mask=inside, other=0.0)
        tl.store(yr + cols, d * rs * g + b, mask=inside)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, C, BLOCK):
            acc += tl.load(xr + start + cols, mask=start + cols < C, other=0.0)
        mu = tl.sum(acc, axis=0) / C
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, C, BLOCK):
            inside = start + cols < C
            d = tl.where(inside, tl.load(xr + start + cols, mask=inside, other=0.0) - mu, 0.0)
            acc += d * d
        rs = 1.0 / tl.sqrt_rn(tl.sum(acc, axis=0) / C + eps)
        for start in range(0, C, BLOCK):
            inside = start + cols < C
            v = tl.load(xr + start + cols, mask=inside, other=0.0)
            g = tl.load(gamma + start + cols, mask=inside, other=0.0)
            b = tl.load(beta + start + cols, mask=inside, other=0.0)
            tl.store(yr + start + cols, (v - mu) * rs * g + b, mask=inside)
    tl.store(mean + row, mu)
    tl.store(rstd + row, rs)

"""Precision and language features: f16, bf16, non-inlined calls, dynamic shared memory,
grid-stride loops, an inter-block spin-wait, integer corner cases, math, warp intrinsics, local."""
import numpy as np

from _zoo import case, cdiv


@case("half_axpy", 1, 2, 7, 300, 1001)
def half_axpy(dev, n, rng):
    x = rng.standard_normal(n).astype(np.float16)
    y = rng.standard_normal(n).astype(np.float16)
    a = np.float16(1.75)
    yp = dev.upload(y)
    dev.launch("haxpy", cdiv(max(n // 2, 1), 128), 128, [n, int(a.view(np.uint16)), dev.upload(x), yp])
    # fma in f16 rounds once: compute exactly in float64, round to half
    want = (np.float64(a) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(dev.read(yp, np.float16, n), want)
    out = dev.empty(n, np.float16)
    dev.launch("hscale_relu", cdiv(n, 128), 128, [dev.upload(x), out, -0.5, n])
    want = np.maximum(x.astype(np.float32) * np.float32(-0.5), 0).astype(np.float16)
    np.testing.assert_array_equal(dev.read(out, np.float16, n), want)


def _bf16(x32):
    """Round-to-nearest-even float32 -> bf16, as uint16 bits."""
    b = x32.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def _from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


@case("bf16_dot", 1, 31, 64, 2000)
def bf16_dot(dev, n, rng):
    a32, b32 = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    a, b = _bf16(a32), _bf16(b32)
    out = dev.zeros(1, np.float32)
    dev.launch("dot", 4, 128, [dev.upload(a), dev.upload(b), out, n])
    prod = _from_bf16(a).astype(np.float64) * _from_bf16(b)
    assert abs(dev.read(out, np.float32, 1)[0] - prod.sum()) <= 1e-5 * np.abs(prod).sum() + 1e-30
    y, pairs = dev.empty(n, np.uint16), dev.empty(max(n // 2, 1), np.uint32)
    dev.launch("round_trip", cdiv(n, 128), 128, [dev.upload(a32), y, pairs, n])
    np.testing.assert_array_equal(dev.read(y, np.uint16, n), _bf16(a32))
    if n >= 2:
        p = dev.read(pairs, np.uint16, 2 * (n // 2))
        doubled = _bf16(2 * _from_bf16(_bf16(a32[: 2 * (n // 2)])))  # x + x is exact doubling
        np.testing.assert_array_equal(p, doubled)


@case("noinline_device", 1, 33, 500)
def noinline_device(dev, n, rng):
    x = rng.uniform(-3, 3, n).astype(np.float32)
    c = np.array([0.5, -1.0, 0.25, 0.125], np.float32)
    y, steps = dev.empty(n, np.float32), dev.empty(n, np.int32)
    dev.launch("apply", cdiv(n, 128), 128, [dev.upload(x), dev.upload(c), 3, y, steps, n])
    want = np.full(n, c[3], np.float32)
    for d in (2, 1, 0):  # Horner in float32, as the kernel does (fma contraction allowed)
        want = want * x + c[d]
    np.testing.assert_allclose(dev.read(y, np.float32, n), want, rtol=1e-5, atol=1e-6)

    def collatz(v):
        s = 0
        while v != 1 and s < 1000:
            v = 3 * v + 1 if v & 1 else v // 2
            s += 1
        return s
    want_steps = [collatz(int(np.float32(abs(v)) * np.float32(100.0)) + 1) for v in x]
    np.testing.assert_array_equal(dev.read(steps, np.int32, n), want_steps)


@case("dynamic_reverse", 1, 100, 256, 1000)
def dynamic_reverse(dev, n, rng):
    a = rng.integers(-(10**6), 10**6, n).astype(np.int32)
    p = dev.upload(a)
    block = 96
    dev.launch("reverse_chunks", cdiv(n, block), block, [p, n], shared=block * 4)
    want = np.concatenate([a[i:i + block][::-1] for i in range(0, n, block)])
    np.testing.assert_array_equal(dev.read(p, np.int32, n), want)


@case("saxpy_grid_stride", 1, 1000, 9999)
def saxpy_grid_stride(dev, n, rng):
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    yp = dev.upload(y)
    dev.launch("saxpy", 3, 128, [n, 2.5, dev.upload(x), yp])
    np.testing.assert_allclose(dev.read(yp, np.float32, n), np.float32(2.5) * x + y, rtol=1e-6, atol=1e-6)


@case("spin_flag", 2, 9, 40, emulator={"max_resident_blocks": 8})
def spin_flag(dev, blocks, rng):
    flag, data, out = dev.zeros(1, np.int32), dev.zeros(1, np.int32), dev.zeros(blocks * 64, np.int32)
    dev.launch("handoff", blocks, 64, [flag, data, out, 11])
    want = np.repeat(34 + np.arange(blocks), 64)
    want[:64] = 0
    np.testing.assert_array_equal(dev.read(out, np.int32, blocks * 64), want)


def _c_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) ^ (b < 0), -q, q)


@case("int_corner", 1, 100, 700)
def int_corner(dev, n, rng):
    a = rng.integers(-(2**31), 2**31, n, dtype=np.int64)
    b = rng.integers(-(2**31), 2**31, n, dtype=np.int64)
    a[:4] = [-(2**31), 2**31 - 1, -7, 7][: min(4, n)]
    b[:4] = [3, -2, 2, -2][: min(4, n)]
    b[(b == 0)] = 5
    f = rng.standard_normal(n).astype(np.float32) * 3e9
    f[:3] = [np.nan, -np.inf, 2.5][: min(3, n)]
    out = dev.empty(n * 16, np.int32)
    a32, b32 = a.astype(np.int32), b.astype(np.int32)
    dev.launch("int_ops", cdiv(n, 64), 64, [dev.upload(a32), dev.upload(b32), dev.upload(f), out, n])
    got = dev.read(out, np.int32, n * 16).reshape(n, 16).astype(np.int64)
    ua, ub = a & 0xFFFFFFFF, b & 0xFFFFFFFF
    uab = ua.astype(np.uint64) * ub.astype(np.uint64)  # < 2^64: exact in uint64, not in int64
    i = np.arange(n)
    w = lambda v: ((np.asarray(v, np.int64) + 2**31) % 2**32) - 2**31  # wrap to int32
    q = _c_div(a, b)
    cols = {
        0: q, 1: a - q * b, 2: (a * b) >> 32, 3: w((uab >> np.uint64(32)).astype(np.int64)), 4: w((a * b) >> 17),
        5: w((uab % np.uint64(2**32)).astype(np.int64) + 0x9E3779B9), 6: a >> (i & 31), 7: w(ua >> (i & 31)),
    }
    for c, want in cols.items():
        np.testing.assert_array_equal(got[:, c], w(want), err_msg=f"column {c}")
    fz = np.nan_to_num(np.trunc(f.astype(np.float64)), nan=0.0)
    np.testing.assert_array_equal(got[:, 8], np.clip(fz, -(2**31), 2**31 - 1).astype(np.int64))
    fu = np.nan_to_num(np.round(f.astype(np.float64)), nan=0.0)
    np.testing.assert_array_equal(got[:, 9], w(np.clip(fu, 0, 2**32 - 1).astype(np.int64)))
    popc = np.array([bin(int(v)).count("1") for v in ua])
    clz = np.array([32 - int(v).bit_length() for v in ua])
    np.testing.assert_array_equal(got[:, 10], popc + 64 * clz)
    np.testing.assert_array_equal(got[:, 11], w([int(f"{int(v):032b}"[::-1], 2) for v in ua]))
    ffs = np.array([(int(v) & -int(v)).bit_length() for v in ua])
    pc64 = np.array([bin(int(x) * int(y)).count("1") for x, y in zip(ua, ub)])
    np.testing.assert_array_equal(got[:, 12], ffs + 64 * pc64)
    np.testing.assert_array_equal(got[:, 13], w(np.maximum(a, b) - np.minimum(a, b) + np.abs(a - _c_div(a, 1000) * 1000)))
    np.testing.assert_array_equal(got[:, 14], w((uab % np.uint64(1000003)).astype(np.int64) + _c_div(a, 7)))
    s16 = ((a & 0xFFFF) ^ 0x8000) - 0x8000
    u8, s8 = ub & 0xFF, ((ub & 0xFF) ^ 0x80) - 0x80
    np.testing.assert_array_equal(got[:, 15], s16 + u8 + s8)


@case("math_funcs", 1, 200)
def math_funcs(dev, n, rng):
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    x[:1] = 0.5
    out = dev.empty(n * 12, np.float32)
    dev.launch("math", cdiv(n, 64), 64, [dev.upload(x), out, n])
    got = dev.read(out, np.float32, n * 12).reshape(n, 12).astype(np.float64)
    v = x.astype(np.float64)
    from math import erf
    want = [np.exp(v), np.log(np.abs(v) + np.float32(1e-3)), np.sqrt(np.abs(v)),
            1 / np.sqrt(np.abs(v) + np.float32(1e-3)), np.sin(v), np.cos(v), np.tanh(v), np.exp(v * 0.5),
            v / (3 + v * v), (np.abs(v) + 0.5) ** np.float32(1.7), np.array([erf(t) for t in v]),
            np.fmod(x * np.float32(7), np.float32(2.5)).astype(np.float64) + np.floor(v) + np.ceil(v)
            + np.round(x * np.float32(3)) + np.trunc(x * np.float32(5))]
    for c, w in enumerate(want):
        # fast-math variants (__expf, __fdividef) are a few ulps off; tolerance covers them
        np.testing.assert_allclose(got[:, c], w, rtol=2e-6 if c not in (7, 8) else 2e-5, atol=1e-6,
                                   err_msg=f"column {c}")
    d = (rng.standard_normal(n) * 3).astype(np.float64)
    o64 = dev.empty(3 * n, np.float64)
    dev.launch("math64", cdiv(n, 64), 64, [dev.upload(d), o64, n])
    got = dev.read(o64, np.float64, 3 * n).reshape(n, 3)
    np.testing.assert_allclose(got[:, 0], np.exp(d) + np.sqrt(np.abs(d)), rtol=1e-14)
    np.testing.assert_allclose(got[:, 1], np.log1p(np.abs(d)) / (1 + d * d), rtol=1e-14)
    np.testing.assert_allclose(got[:, 2], d * d - 1 + d.astype(np.float32), rtol=1e-12, atol=1e-15)


@case("warp_intrinsics", 1, 32, 50, 200)
def warp_intrinsics(dev, n, rng):
    keys = rng.integers(0, 5, n).astype(np.int32)
    out = dev.empty(max(n, 1) * 4, np.int32)
    blocks = cdiv(n, 64)
    dev.launch("warp_ops", blocks, 64, [dev.upload(keys), out, n])
    got = dev.read(out, np.int32, n * 4).reshape(n, 4)
    padded = np.full(blocks * 64, -1, np.int64)
    padded[:n] = keys
    for w in range(0, n, 32):
        k = padded[w:w + 32]
        for lane in range(min(32, n - w)):
            i = w + lane
            assert got[i, 0] == (k == k[lane]).sum()
            assert got[i, 1] == np.int32(np.uint32(k.astype(np.uint64).sum() % 2**32).view(np.int32))
            assert got[i, 2] == k.max() ^ k[7]
            assert got[i, 3] == (16 if lane & 1 else -1)


@case("local_array", 1, 100)
def local_array(dev, n, rng):
    a = rng.integers(-1000, 1000, (n, 8)).astype(np.int32)
    out = dev.empty(n, np.int32)
    dev.launch("local_sort", cdiv(n, 64), 64, [dev.upload(a), out, n])
    s = np.sort(a, axis=1)
    pick = a[:, 0] & 7
    r = np.arange(n)
    np.testing.assert_array_equal(dev.read(out, np.int32, n), s[r, pick] * 10 + s[r, 7 - pick])

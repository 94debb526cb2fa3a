"""Hopper's instructions, one small kernel each: fp8 conversions and fp8 mma.sync, TMA (bulk and
tensor copies, bulk stores and reductions) with mbarriers, mbarrier phases, clusters of one block,
and wgmma from shared-memory descriptors (every swizzle, both majors, register A) in bf16, f16,
tf32 and fp8. Inputs are chosen so every output is exact (small integers, products and sums exact
in f32), so the emulator and a GPU must agree bit for bit (lab/tc_zoo_gpu.py --hopper)."""
import numpy as np
from _zoo import case

from harness.emulator.ops_fp8 import VALUES, encode
from harness.emulator.tensormap import swizzle_offsets

LANE = np.arange(32)
G, T4 = LANE // 4, LANE % 4


def _fp8_codes(rng, shape, kind):
    """Random fp8 codes of small exact values (|v| <= 4, steps of 1/4): products and sums stay exact."""
    v = rng.integers(-16, 17, shape) / 4.0
    return encode(v, kind, True)


@case("hopper_fp8", 64, 256)
def fp8_cvt(dev, n, rng):
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 448, 464, 465, -500, 57344, 61440, 61439, 1e-9,
                        2.0 ** -9, 2.0 ** -10, -0.0, 0.0, 0.0625, 3 * 2.0 ** -10, 240, -241], np.float32)
    x = np.concatenate([special, (rng.standard_normal(2 * n - special.size) * 60).astype(np.float32)])
    outs = [dev.empty(n, np.uint16) for _ in range(4)] + [dev.empty(n, np.uint32) for _ in range(2)]
    dev.launch("fp8_cvt", (n + 127) // 128, 128, [dev.upload(x)] + outs + [n])
    got = {k: dev.read(o, t, n) for k, o, t in zip(("e4", "e5", "r4", "h4", "back4", "back5"), outs,
                                                  [np.uint16] * 4 + [np.uint32] * 2)}
    pair = lambda kind, relu=False: (encode(x[0::2], kind, True, relu).astype(np.uint16) << 8) | \
        encode(x[1::2], kind, True, relu)
    assert (got["e4"] == pair("e4m3")).all() and (got["e5"] == pair("e5m2")).all()
    assert (got["r4"] == pair("e4m3", True)).all()
    back = VALUES["e4m3"][(got["e4"] >> 8).astype(np.int64)]
    finite = np.isfinite(back)
    hi = (got["back4"] >> 16).astype(np.uint16).view(np.float16).astype(np.float64)
    assert (hi[finite] == back[finite]).all()
    return got


def _pack_fp8(mat, rows, cols):
    """(32, regs) uint32 of a fragment map (rows, cols over lanes x elements), 4 codes per register."""
    elems = mat[rows, cols].astype(np.uint8)  # (32, n)
    return np.ascontiguousarray(elems).view(np.uint32).T.copy()


@case("hopper_fp8", 0, 1)
def fp8_mma(dev, kinds, rng):
    ka, kb = ("e4m3", "e4m3") if kinds == 0 else ("e5m2", "e4m3")
    A, B = _fp8_codes(rng, (16, 32), ka), _fp8_codes(rng, (32, 8), kb)
    C = (rng.integers(-64, 64, (16, 8)) / 2.0).astype(np.float32)
    i16 = np.arange(16)[None, :]
    ar, ac = G[:, None] + 8 * ((i16 // 4) % 2), 4 * T4[:, None] + i16 % 4 + 16 * (i16 // 8)
    i8 = np.arange(8)[None, :]
    br, bc = 4 * T4[:, None] + i8 % 4 + 16 * (i8 // 4), np.broadcast_to(G[:, None], (32, 8))
    i4 = np.arange(4)[None, :]
    cr, cc = G[:, None] + 8 * (i4 // 2), 2 * T4[:, None] + i4 % 2
    pa, pb = _pack_fp8(A, ar, ac), _pack_fp8(B, br, bc)
    pc = C[cr, cc].T.copy()
    d = dev.empty(128, np.float32)
    dev.launch("fp8_mma", 1, 32, [dev.upload(pa), dev.upload(pb), dev.upload(pc), d, kinds])
    got = dev.read(d, np.float32, 128).reshape(4, 32)
    want = VALUES[ka][A.astype(np.int64)] @ VALUES[kb][B.astype(np.int64)] + C
    assert (got.T == want[cr, cc]).all()
    return {"D": got}


@case("hopper_tma", 1, 3)
def bulk_stream(dev, chunks, rng):
    blocks = 2
    x = rng.integers(-100, 100, blocks * chunks * 256).astype(np.float32)
    out, sums = dev.empty(x.size, np.float32), dev.zeros(blocks * 256, np.float32)
    dev.launch("bulk_stream", blocks, 256, [dev.upload(x), out, sums, chunks])
    got, s = dev.read(out, np.float32, x.size), dev.read(sums, np.float32, blocks * 256)
    assert (got == x + 1).all()
    assert (s == (x.reshape(blocks, chunks, 256) + 1).sum(1).ravel()).all()
    return {"out": got, "sums": s}


# (dtype, numpy dtype, tensor shape innermost first, box, coordinates, swizzle)
TENSOR_CASES = {
    "1d": ("float32", np.float32, (100,), (32,), (80,), "none"),
    "2d": ("float32", np.float32, (40, 30), (32, 8), (8, 25), "none"),
    "2d_sw128": ("bfloat16", np.uint16, (128, 20), (64, 8), (0, 4), "128B"),
    "2d_sw64": ("float16", np.uint16, (64, 16), (32, 8), (32, 0), "64B"),
    "2d_sw32": ("uint8", np.uint8, (96, 40), (32, 16), (64, 30), "32B"),
    "3d": ("float32", np.float32, (8, 6, 5), (4, 4, 2), (4, 3, 4), "none"),
    "4d": ("uint16", np.uint16, (16, 3, 4, 3), (8, 2, 2, 2), (8, 2, 3, 1), "none"),
    "5d": ("float32", np.float32, (4, 3, 2, 3, 2), (4, 2, 2, 2, 2), (0, 2, 0, 1, 1), "none"),
}


def _strides(dims, esize):
    """Byte strides of dimensions 1.., each row padded to 16 bytes as TMA needs."""
    strides, row = [], dims[0] * esize
    for d in dims[1:]:
        row = (row + 15) // 16 * 16
        strides.append(row)
        row *= d
    return strides


def _box_reference(t, dims, strides, box, coords, esize):
    """What TMA puts in shared memory, unswizzled: the box, out-of-bounds elements zero."""
    raw = t.view(np.uint8)
    axes = [c + np.arange(b) for c, b in zip(coords, box)]
    grid = np.meshgrid(*axes[::-1], indexing="ij")[::-1]
    addr, ok = np.zeros(grid[0].shape, np.int64), np.ones(grid[0].shape, bool)
    stride = [esize] + list(strides)
    for k, g in enumerate(grid):
        addr += g * stride[k]
        ok &= (g >= 0) & (g < dims[k])
    out = np.zeros(addr.shape + (esize,), np.uint8)
    out[ok] = raw[addr[ok][:, None] + np.arange(esize)]
    return out.ravel(), ok.ravel()


@case("hopper_tma", *TENSOR_CASES)
def tensor_box(dev, name, rng):
    dtype, npt, dims, box, coords, swizzle = TENSOR_CASES[name]
    esize = np.dtype(npt).itemsize
    nbytes_box = int(np.prod(box)) * esize
    strides = _strides(dims, esize)
    total = (strides[-1] * dims[-1]) if strides else dims[0] * esize
    t = rng.integers(0, 100, total // esize).astype(npt)  # small integers: exact in every type
    if npt == np.uint16 and dtype == "bfloat16":
        t = (rng.integers(-50, 50, t.size).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if dtype == "float16":
        t = rng.integers(-50, 50, t.size).astype(np.float16).view(np.uint16)
    src, dst, acc = dev.upload(t), dev.upload(np.zeros_like(t)), dev.upload(t.copy())
    maps = [dev.upload(np.frombuffer(dev.tensor_map(dtype, p, dims, strides, box, swizzle=swizzle), np.uint8))
            for p in (src, dst, acc)]
    raw = dev.empty(nbytes_box, np.uint8)
    c = np.array(list(coords) + [0] * (5 - len(coords)), np.int32)
    d = np.array([0, 0, 0, 0, 0], np.int32)
    reduce = int(dtype not in ("uint8", "uint16"))
    dev.launch("tensor_box", 1, 128, [*maps, dev.upload(c), dev.upload(d), raw, nbytes_box, len(dims), reduce])
    got = dev.read(raw, np.uint8, nbytes_box)
    want, _ok = _box_reference(t, dims, strides, box, coords, esize)
    pos = swizzle_offsets(np.arange(nbytes_box), {"none": 0, "32B": 1, "64B": 2, "128B": 3}[swizzle])
    assert (got[pos] == want).all(), f"{name}: box differs"
    out = {"box": got}
    if len(dims) == 2:
        out["stored"] = dev.read(dst, npt, t.size)
        out["reduced"] = dev.read(acc, npt, t.size)
    return out


@case("hopper_tma", 64)
def mbar_tokens(dev, n, rng):
    out = dev.empty(4 * n, np.uint32)
    dev.launch("mbar_tokens", 1, n, [out])
    got = dev.read(out, np.uint32, 4 * n).reshape(n, 4)
    # after phase 0, parity 1 names the running phase 1 (not complete: 0); the second phase
    # completes (1); the two tokens differ; after both phases, parity 0 names the running phase 2
    assert (got == [1, 1, 0, 1]).all(), f"per thread [early*2+ok, tokens differ, after, ok]: {got[:2].tolist()}"
    return {"out": got}


@case("hopper_tma", 1, 3)
def cluster_one(dev, blocks, rng):
    out = dev.empty(blocks * 64 * 5, np.uint32)
    dev.launch("cluster_one", blocks, 64, [out])
    got = dev.read(out, np.uint32, blocks * 64 * 5).reshape(blocks, 64, 5)
    b = np.arange(blocks)[:, None]
    t = np.arange(64)[None, :]
    assert (got[..., 0] == b).all() and (got[..., 1] == 0).all() and (got[..., 2] == 1).all()
    assert (got[..., 3] == 0).all() and (got[..., 4] == ((t + 1) % 64) * 3 + b).all()
    return {"out": got}


# ---- wgmma ---------------------------------------------------------------------------------------
_CODE = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
_SPAN = {"none": 0, "128B": 128, "64B": 64, "32B": 32}
_SW = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
# kernel -> (element type, K per wgmma, esize, MN-major)
WG_KERNELS = {"wgmma_bf16_k": ("bf16", 16, 2, False), "wgmma_bf16_mn": ("bf16", 16, 2, True),
              "wgmma_tf32": ("tf32", 8, 4, False), "wgmma_fp8": ("fp8", 32, 1, False),
              "wgmma_f16_rega": ("f16", 16, 2, False)}


def _layout_offsets(rows, K, esize, layout, mn_major, lbo, sbo):
    """Byte offsets (rows, K) of CUTLASS's canonical GMMA layouts (before the swizzle)."""
    span, T = _SPAN[layout], 16 // esize
    mn, k = np.arange(rows)[:, None], np.arange(K)[None, :]
    if not mn_major:
        if not span:
            return (mn % 8) * 16 + (mn // 8) * sbo + (k % T) * esize + (k // T) * lbo
        return (mn % 8) * span + (mn // 8) * sbo + k * esize
    if not span:
        return (mn % T) * esize + (mn // T) * sbo + (k % 8) * 16 + (k // 8) * lbo
    per = span // esize
    return (mn % per) * esize + (mn // per) * lbo + (k % 8) * span + (k // 8) * sbo


def _place(img, start, mat_bytes, layout, mn_major, lbo, sbo):
    """Write a (rows, K, esize) byte matrix into the image at start, swizzled; descriptor bits."""
    rows, K, esize = mat_bytes.shape
    off = start + _layout_offsets(rows, K, esize, layout, mn_major, lbo, sbo)
    pos = swizzle_offsets(off.astype(np.int64), _SW[layout])
    img[pos[..., None] + np.arange(esize)] = mat_bytes
    return (lbo >> 4) << 16 | (sbo >> 4) << 32 | _CODE[layout] << 62


def _wg_values(rng, kind, shape):
    """(bytes (…, esize), float64 values) of small exact numbers."""
    if kind == "fp8":
        codes = _fp8_codes(rng, shape, "e4m3")
        return codes[..., None], VALUES["e4m3"][codes.astype(np.int64)]
    v = rng.integers(-4, 5, shape).astype(np.float32)
    if kind == "bf16":
        raw = (v.view(np.uint32) >> 16).astype(np.uint16)
    elif kind == "f16":
        raw = v.astype(np.float16).view(np.uint16)
    else:
        raw = v.view(np.uint32)
    return np.ascontiguousarray(raw).view(np.uint8).reshape(shape + (-1,)), v.astype(np.float64)


def _geometry(layout, mn_major, rows, K, esize):
    """(LBO, SBO, bytes per k step, whether step 1 sits 32 bytes along the same rows)."""
    span = _SPAN[layout]
    if not mn_major:
        if not span:
            return 128, 256, rows // 8 * 256, False
        return 16, 8 * span, rows // 8 * 8 * span, span >= 64
    if not span:
        return rows // (16 // esize) * 128, 128, K // 8 * rows // (16 // esize) * 128, False
    per = span // esize  # MN elements in one swizzle row; LBO steps over blocks of them
    return K * span, 8 * span, -(-rows // per) * K * span, False


WG_CASES = {f"{k}:{lay}": (k, lay) for k, lays in (
    ("wgmma_bf16_k", ("none", "32B", "64B", "128B")), ("wgmma_bf16_mn", ("none", "32B", "64B", "128B")),
    ("wgmma_tf32", ("none", "128B")), ("wgmma_fp8", ("32B", "128B")), ("wgmma_f16_rega", ("128B",)))
    for lay in lays}
# fp8 with accumulators near 4096, where float32 keeps 2^-11 but the H200's fp8 sum keeps 2^-1
# (ops_wgmma's docstring): on the H200 887 of its 1024 sums differ from a cut of the exact sum
WG_CASES["wgmma_fp8:128B:fp22"] = ("wgmma_fp8", "128B")


def d_fragment():
    """(rows, cols), each (128 lanes, 8): where each f32 accumulator of a warpgroup's m64n16 wgmma
    lies in the 64 x 16 tile (warp w owns rows 16w.., mma.sync's C layout per 8 columns)."""
    lane = np.arange(128)
    w, g, t4 = lane // 32, (lane % 32) // 4, lane % 4
    e = np.arange(8)[None, :]
    return 16 * w[:, None] + g[:, None] + 8 * ((e % 4) // 2), 8 * (e // 4) + 2 * t4[:, None] + e % 2


def fp22_operands():
    """The wgmma_fp8:128B:fp22 case run on the emulator: (its two k32 steps' exact operands
    [(a, b, c)], the emulator's D in lane order), as lab/tc_zoo_gpu.py seeds it."""
    import zlib

    import _zoo

    name, size = "wgmma_tile", "wgmma_fp8:128B:fp22"
    steps, real = [], globals()["_fp22_step"]

    def spy(a, b, c):
        steps.append((a.copy(), b.copy(), c.copy()))
        return real(a, b, c)

    globals()["_fp22_step"] = spy
    try:
        rng = np.random.default_rng(zlib.crc32(f"{name}-{size}".encode()))
        got = wgmma_tile(_zoo.Device("hopper_wgmma"), size, rng)["D"]
    finally:
        globals()["_fp22_step"] = real
    return steps, got


def _fp22_step(a, b, c):
    """One fp8 wgmma k32 step as the H200 sums it: a (64, 32), b (N, 32), c (64, N) exact values.
    Each product cut toward zero to 2^(e - 13), e the exponent of the largest product or c; the
    exact sum cut toward zero to 13 mantissa bits. (The first four sums of the fp22 case where the
    H200 and a cut of the exact sum disagree were 4064, 4041.5, 4141 and 4108.5: this gives those.)"""
    p = a[:, None, :] * b[None, :, :]
    top = np.maximum(np.abs(c), np.abs(p).max(axis=2))
    q = 2.0 ** (np.floor(np.log2(np.where(top > 0, top, 1.0))) - 13)
    s = c + (np.trunc(p / q[..., None]) * q[..., None]).sum(axis=2)
    r = 2.0 ** (np.floor(np.log2(np.where(s != 0, np.abs(s), 1.0))) - 13)
    return np.trunc(s / r) * r


@case("hopper_wgmma", *WG_CASES)
def wgmma_tile(dev, name, rng):
    kernel, layout = WG_CASES[name]
    kind, K, esize, mn_major = WG_KERNELS[kernel]
    N = 16
    img = np.zeros(16384, np.uint8)
    (abytes, A) = _wg_values(rng, kind, (64, 2 * K))
    bkind = kind
    (bbytes, B) = _wg_values(rng, bkind, (N, 2 * K))  # B stored as N x K (its K-major form)
    if kind == "fp8":  # the kernel's B is e5m2: re-encode the same exact values
        bbytes = encode(B, "e5m2", True)[..., None]
        B = VALUES["e5m2"][bbytes[..., 0].astype(np.int64)]
    a_off, b_off = [0, 0], [8192, 8192]
    lbo, sbo, step, inrow = _geometry(layout, mn_major, 64, K, esize)
    blbo, bsbo, bstep, _ = _geometry(layout, mn_major, N, K, esize)
    for s in range(2):
        a_off[s] = s * (K * esize if inrow else max(step, 1024))
        b_off[s] = 8192 + s * (K * esize if inrow else max(bstep, 1024))
        a_fixed = _place(img, a_off[s], abytes[:, s * K:(s + 1) * K], layout, mn_major, lbo, sbo)
        b_fixed = _place(img, b_off[s], bbytes[:, s * K:(s + 1) * K], layout, mn_major, blbo, bsbo)
    step_rec = np.zeros(4, np.uint64)
    step_rec[0], step_rec[1] = a_fixed, b_fixed
    step_rec[2] = a_off[0] | (a_off[1] << 32)
    step_rec[3] = b_off[0] | (b_off[1] << 32)
    C = rng.integers(-8, 9, (64, N)).astype(np.float32)
    if name.endswith(":fp22"):
        C += np.float32(4096.0)
    lane = np.arange(128)
    w, g, t4 = lane // 32, (lane % 32) // 4, lane % 4
    rows, cols = d_fragment()
    areg = np.zeros(1, np.uint32)
    sign_b = 1.0
    if kernel == "wgmma_f16_rega":  # A from registers: mma.sync's m16n8k16 A fragment per warp
        sign_b = -1.0
        i8 = np.arange(8)[None, :]
        ar = 16 * w[:, None] + g[:, None] + 8 * ((i8 // 2) % 2)
        ac = 2 * t4[:, None] + i8 % 2 + 8 * (i8 // 4)
        halves = np.stack([A[:, s * K:(s + 1) * K][ar, ac].astype(np.float16) for s in range(2)])  # (2, 128, 8)
        areg = np.ascontiguousarray(halves).view(np.uint32).reshape(2, 128, 4)
    out = dev.empty(128 * 8, np.float32)
    dev.launch(kernel, 1, 128, [dev.upload(img.view(np.uint32)), 1024, dev.upload(step_rec),
                                dev.upload(C[rows, cols].astype(np.float32)), dev.upload(areg), out])
    got = dev.read(out, np.float32, 128 * 8).reshape(128, 8)
    want = (A @ B.T) * sign_b + C
    if kind == "fp8":  # two wgmmas, k steps 0 and 1
        want = _fp22_step(A[:, K:], B[:, K:], _fp22_step(A[:, :K], B[:, :K], C.astype(np.float64)))
        if name.endswith(":fp22"):  # the cut shows: float32 would have kept fractions here
            assert (want != np.float32(A @ B.T + C)).mean() > 0.5
    w = want[rows, cols]
    bad = got != w
    assert not bad.any(), f"{name}: {np.argwhere(bad)[:3]} got {got[bad][:3]}, want {w[bad][:3]}"
    return {"D": got}


@case("hopper_wgmma", 256)
def maxnreg(dev, n, rng):
    out = dev.empty(n, np.uint32)
    dev.launch("maxnreg", 1, n, [out])
    got = dev.read(out, np.uint32, n)
    assert (got == np.arange(n) * 7).all()
    return {"out": got}


# ---- clusters of several blocks ------------------------------------------------------------------
CLUSTER_CASES = {"ring2": ((2, 1), (4, 1)), "ring4": ((2, 2), (4, 2)),  # kernel -> (cluster, grid)
                 "ring4_generic": ((4, 1), (8, 1))}


@case("hopper_cluster", *CLUSTER_CASES)
def cluster_ring(dev, kernel, rng):
    (cx, cy), (gx, gy) = CLUSTER_CASES[kernel]
    T, n = 64, cx * cy
    out = dev.empty(gx * gy * T * 6, np.uint32)
    dev.launch(kernel, (gx, gy), T, [out])
    got = dev.read(out, np.uint32, gx * gy * T * 6).reshape(gy, gx, T, 6)
    by, bx, t = np.meshgrid(np.arange(gy), np.arange(gx), np.arange(T), indexing="ij")
    rank = bx % cx + cx * (by % cy)
    assert (got[..., 0] == rank).all() and (got[..., 1] == n).all()
    assert (got[..., 2] == bx // cx).all() and (got[..., 3] == bx % cx + 10 * (by % cy)).all()
    nxt = (rank + 1) % n
    nby = by - by % cy + nxt // cx  # the next rank's blockIdx.y (its cell holds 1000 * blockIdx.y)
    want = (t + 1) % T + 100 * nxt + 1000 * nby
    assert (got[..., 4] == want).all()
    # inbox[t] of rank r was written by rank r+1 (its prev): 2 * what that rank read
    nbx = bx - bx % cx + nxt % cx
    assert (got[..., 5] == 2 * got[nby, nbx, t, 4]).all()
    return {"out": got}


# ---- a TMA + mbarrier + wgmma GEMM -----------------------------------------------------------------
def _bf16_bits(v):
    return (np.asarray(v, np.float32).view(np.uint32) >> 16).astype(np.uint16)


@case("hopper_gemm", (64, 128, 64), (100, 136, 200), (130, 256, 72))
def tma_wgmma_gemm(dev, size, rng):
    M, N, K = size
    A = rng.integers(-3, 4, (M, K)).astype(np.float32)  # small integers: every sum exact in f32
    B = rng.integers(-3, 4, (K, N)).astype(np.float32)
    a, b = dev.upload(_bf16_bits(A)), dev.upload(_bf16_bits(B))
    ma = dev.tensor_map("bfloat16", a, (K, M), (2 * K,), (64, 64), swizzle="128B")
    mb = dev.tensor_map("bfloat16", b, (N, K), (2 * N,), (64, 64), swizzle="128B")
    c = dev.empty(M * N, np.float32)
    dev.launch("tma_wgmma_gemm", (-(-N // 64), -(-M // 64)), 128, [ma, mb, c, M, N, K], shared=2 * 16384 + 1024)
    got = dev.read(c, np.float32, M * N).reshape(M, N)
    assert (got == A @ B).all(), f"{np.argwhere(got != A @ B)[:3]}"
    return {"C": got}

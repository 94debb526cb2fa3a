"""Tensor cores, async copies and int8 dot products: wmma and hand-written mma.sync GEMMs in bf16,
a cp.async double-buffered SGEMM, a dp4a dot product, cooperative-groups tile reductions.

Each case returns its outputs by name, so lab/tc_zoo_gpu.py can run the same case with the same
inputs on a GPU and compare the two devices' outputs."""
import numpy as np

from _zoo import case, cdiv


def bf16(rng, *shape, scale=1.0):
    """Random bf16 values: (the bits as uint16, their exact values as float64)."""
    v = (rng.standard_normal(shape) * scale).astype(np.float32)
    bits = ((v.view(np.uint32) + 0x8000) >> 16).astype(np.uint16)  # round half up in magnitude
    exact = (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits, exact


def _check_gemm(got, A, B, what):
    want = A @ B
    scale = np.abs(A) @ np.abs(B)  # float32 accumulation: a few ulps of sum |a*b| per output
    bound = 8 * np.finfo(np.float32).eps * max(1, A.shape[1]) ** 0.5 * scale + 1e-30
    bad = np.abs(got - want) > bound
    assert not bad.any(), f"{what}: {bad.sum()} outputs off, first at {np.argwhere(bad)[0]}"


GEMM_SIZES = ((1, 1, 1), (17, 33, 20), (40, 24, 70), (64, 64, 48))


def _bf16_gemm(dev, size, rng, kernel):
    M, N, K = size
    (a, A), (b, B) = bf16(rng, M, K), bf16(rng, K, N)
    c = dev.empty(M * N, np.float32)
    dev.launch(kernel, (cdiv(N, 32), cdiv(M, 32)), 128, [dev.upload(a), dev.upload(b), c, M, N, K])
    got = dev.read(c, np.float32, M * N).reshape(M, N)
    _check_gemm(got.astype(np.float64), A, B, kernel)
    return {"C": got}


@case("wmma_gemm", *GEMM_SIZES)
def wmma_gemm(dev, size, rng):
    return _bf16_gemm(dev, size, rng, "wmma_gemm")


@case("mma_ldmatrix_gemm", *GEMM_SIZES)
def mma_ldmatrix_gemm(dev, size, rng):
    return _bf16_gemm(dev, size, rng, "mma_gemm")


@case("cp_async_gemm", (1, 1, 1), (17, 33, 20), (40, 24, 70))
def cp_async_gemm(dev, size, rng):
    M, N, K = size
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    c = dev.empty(M * N, np.float32)
    dev.launch("sgemm_async", (cdiv(N, 16), cdiv(M, 16)), (16, 16), [dev.upload(A), dev.upload(B), c, M, N, K])
    got = dev.read(c, np.float32, M * N).reshape(M, N)
    _check_gemm(got.astype(np.float64), A.astype(np.float64), B.astype(np.float64), "sgemm_async")
    return {"C": got}


@case("dp4a_dot", 1, 3, 4, 1001, 40000)
def dp4a_dot(dev, n, rng):
    x = rng.integers(-128, 128, n).astype(np.int8)
    y = rng.integers(-128, 128, n).astype(np.int8)
    out = dev.zeros(1, np.int32)
    pad = lambda v: np.concatenate([v, np.zeros(-len(v) % 4, np.int8)])  # int32 loads stay inside
    dev.launch("dot_i8", min(cdiv(max(n // 4, 1), 256), 8), 256, [dev.upload(pad(x)), dev.upload(pad(y)), out, n])
    got = dev.read(out, np.int32, 1)
    assert int(got[0]) == int((x.astype(np.int64) * y).sum())
    m = min(n, 300)  # dp2a and mixed-sign dp4a on raw words
    a = rng.integers(-2**31, 2**31, m).astype(np.int32)
    b = rng.integers(-2**31, 2**31, m).astype(np.int32)
    mix = dev.empty(4 * m, np.int32)
    dev.launch("dp2a_mix", cdiv(m, 128), 128, [dev.upload(a), dev.upload(b), mix, m])
    got2 = dev.read(mix, np.int32, 4 * m).reshape(m, 4).astype(np.int64)
    h, hu = a.view(np.int16).reshape(m, 2).astype(np.int64), a.view(np.uint16).reshape(m, 2).astype(np.int64)
    sb, ub = b.view(np.int8).reshape(m, 4).astype(np.int64), b.view(np.uint8).reshape(m, 4).astype(np.int64)
    i = np.arange(m)
    wrap = lambda v: (v + 2**31) % 2**32 - 2**31
    want = np.stack([wrap((h * sb[:, :2]).sum(1) + i), wrap((h * sb[:, 2:]).sum(1) - i),
                     wrap((hu * ub[:, :2]).sum(1) + 5), wrap((a.view(np.int8).reshape(m, 4) * ub).sum(1))], 1)
    np.testing.assert_array_equal(got2, want)
    return {"dot": got, "dp2a": got2.astype(np.int32)}


@case("cg_tile_reduce", 1, 100, 256, 1000)
def cg_tile_reduce(dev, n, rng):
    x = rng.standard_normal(n).astype(np.float32)
    blocks = cdiv(n, 256)
    s16, s64 = dev.empty(blocks * 16, np.float32), dev.empty(blocks * 4, np.float32)
    dev.launch("tile_sums", blocks, 256, [dev.upload(x), s16, s64, n])
    pad = np.zeros(blocks * 256)
    pad[:n] = x
    got16, got64 = dev.read(s16, np.float32, blocks * 16), dev.read(s64, np.float32, blocks * 4)
    for got, w in ((got16, 16), (got64, 64)):
        want = pad.reshape(-1, w).sum(1)
        bound = 4 * np.finfo(np.float32).eps * np.log2(w) * np.abs(pad).reshape(-1, w).sum(1) + 1e-30
        assert np.all(np.abs(got - want) <= bound), f"tiles of {w}"
    return {"sums16": got16, "sums64": got64}


FRAG_SIZES = ((1, 1, 1), (17, 9, 40), (32, 24, 70))


@case("mma_fragments", *FRAG_SIZES)
def mma_fragments(dev, size, rng):
    """Each mma variant with fragments from global by the ISA's tables: on the GPU this checks
    that the tables (and so the emulator's) are the hardware's."""
    M, N, K = size
    grid = (cdiv(N, 8), cdiv(M, 16))
    out = {}
    (a, A), (b, B) = bf16(rng, M, K), bf16(rng, K, N)
    c = dev.empty(M * N, np.float32)
    dev.launch("bf16_k16", grid, 32, [dev.upload(a), dev.upload(b), c, M, N, K])
    out["bf16"] = dev.read(c, np.float32, M * N).reshape(M, N)
    _check_gemm(out["bf16"].astype(np.float64), A, B, "bf16_k16")

    A32, B32 = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    dev.launch("tf32_k8", grid, 32, [dev.upload(A32), dev.upload(B32), c, M, N, K])
    out["tf32"] = dev.read(c, np.float32, M * N).reshape(M, N)
    want = A32.astype(np.float64) @ B32.astype(np.float64)  # tf32 inputs: 2^-11 relative each
    assert np.all(np.abs(out["tf32"] - want) <= 2e-3 * (np.abs(A32) @ np.abs(B32)) + 1e-30), "tf32_k8"

    A8, B8 = rng.integers(-128, 128, (M, K)).astype(np.int8), rng.integers(-128, 128, (K, N)).astype(np.int8)
    ci = dev.empty(M * N, np.int32)
    dev.launch("s8_k32", grid, 32, [dev.upload(A8), dev.upload(B8), ci, M, N, K])
    out["s8"] = dev.read(ci, np.int32, M * N).reshape(M, N)
    np.testing.assert_array_equal(out["s8"], A8.astype(np.int64) @ B8.astype(np.int64))

    Ah, Bh = (rng.standard_normal((M, K)) * 0.5).astype(np.float16), (rng.standard_normal((K, N)) * 0.5).astype(np.float16)
    ch = dev.empty(M * N, np.float16)
    dev.launch("f16_k16_f16acc", grid, 32, [dev.upload(Ah), dev.upload(Bh), ch, M, N, K])
    out["f16"] = dev.read(ch, np.float16, M * N).reshape(M, N)
    want = Ah.astype(np.float64) @ Bh.astype(np.float64)
    scale = np.abs(Ah).astype(np.float64) @ np.abs(Bh).astype(np.float64)
    # an f16 accumulator rounds at every k16 step on the GPU: a few f16 ulps of the partial sums
    assert np.all(np.abs(out["f16"] - want) <= 4e-3 * scale + 2e-3 * np.abs(want) + 1e-6), "f16_k16_f16acc"
    return out


@case("wmma_variants", (16, 16, 16), (32, 48, 64), (48, 16, 32))
def wmma_variants(dev, size, rng):
    """f16 with an f16 accumulator from C, s8 -> s32 stored column-major, tf32 -> f32; each matrix
    with a leading dimension 8 past its width, so the stride is exercised."""
    M, N, K = size
    grid = (N // 16, M // 16)
    pad = lambda a: np.pad(a, ((0, 0), (0, 8)))
    out = {}
    At = (rng.standard_normal((K, M)) * 0.5).astype(np.float16)  # A transposed (column-major A)
    B = (rng.standard_normal((K, N)) * 0.5).astype(np.float16)
    C0 = rng.standard_normal((M, N)).astype(np.float16)
    c = dev.upload(pad(C0))
    dev.launch("f16_acc", grid, 32, [dev.upload(pad(At)), dev.upload(pad(B)), c, K, M + 8, N + 8, N + 8])
    out["f16"] = dev.read(c, np.float16, M * (N + 8)).reshape(M, N + 8)[:, :N]
    want = At.T.astype(np.float64) @ B.astype(np.float64) + C0
    scale = np.abs(At.T).astype(np.float64) @ np.abs(B).astype(np.float64) + np.abs(C0)
    assert np.all(np.abs(out["f16"] - want) <= 4e-3 * scale + 2e-3 * np.abs(want) + 1e-3), "f16_acc"

    A8 = rng.integers(-128, 128, (M, K)).astype(np.int8)
    B8t = rng.integers(-128, 128, (N, K)).astype(np.int8)  # B transposed (column-major B)
    ci = dev.empty(N * (M + 8), np.int32)
    dev.launch("s8_s32", grid, 32, [dev.upload(pad(A8)), dev.upload(pad(B8t)), ci, K, K + 8, K + 8, M + 8])
    out["s8"] = dev.read(ci, np.int32, N * (M + 8)).reshape(N, M + 8)[:, :M].T  # stored column-major
    np.testing.assert_array_equal(out["s8"], A8.astype(np.int64) @ B8t.T.astype(np.int64))

    A32 = rng.standard_normal((M, K)).astype(np.float32)
    B32 = rng.standard_normal((K, N)).astype(np.float32)
    cf = dev.empty(M * (N + 8), np.float32)
    dev.launch("tf32_f32", grid, 32, [dev.upload(pad(A32)), dev.upload(pad(B32)), cf, K, K + 8, N + 8, N + 8])
    out["tf32"] = dev.read(cf, np.float32, M * (N + 8)).reshape(M, N + 8)[:, :N]
    want = A32.astype(np.float64) @ B32.astype(np.float64)
    assert np.all(np.abs(out["tf32"] - want) <= 2e-3 * (np.abs(A32) @ np.abs(B32)) + 1e-30), "tf32_f32"
    return out

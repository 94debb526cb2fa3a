"""Dense kernels: sorting/top-k, matmul, softmax, layernorm, attention, transpose, convolution."""
import numpy as np

from _zoo import case, cdiv


def _f32(rng, *shape, scale=1.0, offset=0.0):
    return (rng.standard_normal(shape) * scale + offset).astype(np.float32)


@case("topk_bitonic", (1, 1, 1), (3, 100, 8), (2, 64, 64), (4, 1000, 17))
def topk_bitonic(dev, size, rng):
    R, L, k = size
    x = np.round(_f32(rng, R, L, scale=4.0)) / 2  # many ties
    x[0, :: 7] = -np.inf
    P = 1 << max(0, (L - 1).bit_length())
    vals, idx = dev.empty(R * k, np.float32), dev.empty(R * k, np.int32)
    dev.launch("topk", R, 256, [dev.upload(x), vals, idx, L, k, P])
    v, ix = dev.read(vals, np.float32, R * k).reshape(R, k), dev.read(idx, np.int32, R * k).reshape(R, k)
    want = -np.sort(-x, axis=1)[:, :k]
    np.testing.assert_array_equal(v, want)
    for r in range(R):
        assert len(set(ix[r])) == k and np.array_equal(x[r, ix[r]], v[r])


@case("bitonic_global", 1, 2, 100, 1024, 3001)
def bitonic_global(dev, n, rng):
    x = _f32(rng, n, scale=100.0)
    p = 1 << max(0, (n - 1).bit_length())
    a = dev.empty(p, np.float32)
    dev.emu.write(a, x)
    dev.launch("pad", cdiv(p, 256), 256, [a, n, p])
    size = 2
    while size <= p:
        stride = size // 2
        while stride > 0:
            dev.launch("bitonic_step", cdiv(p, 256), min(p, 256), [a, size, stride])
            stride //= 2
        size *= 2
    np.testing.assert_array_equal(dev.read(a, np.float32, n), np.sort(x))


def _matmul(dev, size, rng, block, grid):
    M, N, K = size
    A, B = _f32(rng, M, K, offset=0.1), _f32(rng, K, N, offset=-0.1)
    C = dev.empty(M * N, np.float32)
    dev.launch("matmul", grid(M, N), block, [dev.upload(A), dev.upload(B), C, M, N, K])
    got = dev.read(C, np.float32, M * N).reshape(M, N)
    want = A.astype(np.float64) @ B.astype(np.float64)
    scale = np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)
    assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-30)


MATMUL = ((1, 1, 1), (17, 33, 5), (40, 1, 70), (64, 48, 32))


@case("matmul_tiled", *MATMUL)
def matmul_tiled(dev, size, rng):
    _matmul(dev, size, rng, (16, 16), lambda M, N: (cdiv(N, 16), cdiv(M, 16)))


@case("matmul_naive", *MATMUL)
def matmul_naive(dev, size, rng):
    _matmul(dev, size, rng, (8, 8), lambda M, N: (cdiv(N, 8), cdiv(M, 8)))


@case("softmax_online", (1, 1), (3, 7), (2, 1000), (4, 129))
def softmax_online(dev, size, rng):
    R, C = size
    x = _f32(rng, R, C, scale=3000.0)  # exp of the raw values would overflow
    y = dev.empty(R * C, np.float32)
    dev.launch("softmax", R, 128, [dev.upload(x), y, C])
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    np.testing.assert_allclose(dev.read(y, np.float32, R * C).reshape(R, C), e / e.sum(1, keepdims=True),
                               rtol=1e-5, atol=1e-7)


@case("layernorm", (1, 1), (2, 100), (3, 257), (2, 1024))
def layernorm(dev, size, rng):
    R, C = size
    x, g, b = _f32(rng, R, C, scale=2.0, offset=5.0), _f32(rng, C), _f32(rng, C)
    y = dev.empty(R * C, np.float32)
    dev.launch("layernorm", R, 256, [dev.upload(x), dev.upload(g), dev.upload(b), y, C, 1e-5])
    x64 = x.astype(np.float64)
    mu, var = x64.mean(1, keepdims=True), x64.var(1, keepdims=True)
    want = (x64 - mu) / np.sqrt(var + 1e-5) * g + b
    np.testing.assert_allclose(dev.read(y, np.float32, R * C).reshape(R, C), want, rtol=2e-4, atol=2e-4)


@case("attention_flash", (1, 1, 0), (1, 17, 1), (2, 40, 0), (1, 70, 1))
def attention_flash(dev, size, rng):
    BH, S, causal = size
    D = 32
    Q, K, V = (_f32(rng, BH, S, D) for _ in range(3))
    O = dev.empty(BH * S * D, np.float32)
    scale = 1 / np.sqrt(D)
    dev.launch("attention", (cdiv(S, 32), BH), 32,
               [dev.upload(Q), dev.upload(K), dev.upload(V), O, S, scale, causal])
    s = np.einsum("bqd,bkd->bqk", Q.astype(np.float64), K.astype(np.float64)) * scale
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ V.astype(np.float64)
    np.testing.assert_allclose(dev.read(O, np.float32, BH * S * D).reshape(BH, S, D), want, rtol=1e-4, atol=1e-5)


@case("transpose", (1, 1), (32, 32), (70, 45), (100, 33))
def transpose(dev, size, rng):
    H, W = size
    a = _f32(rng, H, W)
    src = dev.upload(a)
    for kernel in ("transpose_naive", "transpose_padded"):
        out = dev.empty(H * W, np.float32)
        dev.launch(kernel, (cdiv(W, 32), cdiv(H, 32)), (32, 8), [src, out, W, H])
        np.testing.assert_array_equal(dev.read(out, np.float32, H * W).reshape(W, H), a.T)
    out = dev.empty(H * W, np.float32)
    dev.launch("copy_strided", cdiv(H * W, 128), 128, [src, out, H, W])
    np.testing.assert_array_equal(dev.read(out, np.float32, H * W).reshape(W, H), a.T)


@case("conv1d_const", 1, 3, 128, 131, 1000)
def conv1d_const(dev, n, rng):
    x = _f32(rng, n)
    y, calls = dev.empty(n, np.float32), dev.empty(1, np.int32)
    filt = np.array([0.05, -0.25, 0.5, 1.0, 0.5, -0.25, 0.05])
    for _ in range(2):  # the module global keeps counting across launches
        dev.launch("conv1d", cdiv(n, 128), 128, [dev.upload(x), y, n])
    xp = np.pad(x.astype(np.float64), 3)
    want = sum(filt[k] * xp[k:k + n] for k in range(7))
    np.testing.assert_allclose(dev.read(y, np.float32, n), want, rtol=1e-5, atol=1e-5)
    dev.launch("read_calls", 1, 1, [calls])
    assert dev.read(calls, np.int32, 1)[0] == 2 * cdiv(n, 128)

"""Softmax (four versions) and the pointwise kernels (GELU fwd/bwd, residual f32/bf16, bias-GELU bf16x2)."""
import numpy as np

from _corpus import bf16, case, close, f32


def _softmax(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@case("llm_softmax", kernels=4)
def softmax_versions(dev, rng):
    N, C = 7, 100
    x = (rng.standard_normal((N, C)) * 4).astype(np.float32)
    want = _softmax(x.astype(np.float64))
    px = dev.upload(x)
    for name, grid, block, shared in (("softmax_forward_kernel1", 1, 32, 0), ("softmax_forward_kernel2", N, 64, 64 * 4),
                                      ("softmax_forward_online_kernel3", 2, 128, 0), ("softmax_forward_kernel4", 1, 256, 0)):
        out = dev.empty(N * C, np.float32)
        dev.launch(dev.kernel(name), grid, block, [out, px, N, C], shared=shared)
        close(dev.read(out, np.float32, N * C).reshape(N, C), want, 1e-5, 1e-7, name)


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


@case("llm_pointwise", kernels=2)
def gelu_forward_backward(dev, rng):
    n = 1000
    x = (rng.standard_normal(n) * 2).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    out, dx = dev.empty(n, np.float32), dev.empty(n, np.float32)
    px = dev.upload(x)
    dev.launch(dev.kernel("gelu_forward_kernel"), 2, 128, [out, px, n])  # grid-stride past 256 threads
    close(dev.read(out, np.float32, n), _gelu(x.astype(np.float64)), 1e-5, 1e-6, "gelu")
    dev.launch(dev.kernel("gelu_backward_kernel"), 8, 128, [dx, px, dev.upload(g), n])
    h = 1e-4
    x64 = x.astype(np.float64)
    want = (_gelu(x64 + h) - _gelu(x64 - h)) / (2 * h) * g
    close(dev.read(dx, np.float32, n), want, 1e-4, 1e-5, "gelu backward")


@case("llm_pointwise", kernels=2)
def residual_packs(dev, rng):
    n = 1024
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = dev.empty(n, np.float32)
    dev.launch(dev.kernel("residual_forward_kernel", "IfE"), 2, 128, [out, dev.upload(a), dev.upload(b), n])
    close(dev.read(out, np.float32, n), a.astype(np.float64) + b, 1e-7, 0, "residual f32")
    ha, hb = bf16(a), bf16(b)
    out = dev.empty(n, np.uint16)
    dev.launch(dev.kernel("residual_forward_kernel", "13__nv_bfloat16"), 1, 128, [out, dev.upload(ha), dev.upload(hb), n])
    assert (dev.read(out, np.uint16, n) == bf16(f32(ha) + f32(hb))).all(), "residual bf16 not rounded like numpy"


@case("llm_pointwise")
def bias_gelu_bf16x2(dev, rng):
    rows, C = 6, 48
    x, b = bf16(rng.standard_normal((rows, C))), bf16(rng.standard_normal(C))
    out = dev.empty(rows * C, np.uint16)
    dev.launch("bias_gelu_bf16x2", 2, 64, [out, dev.upload(x), dev.upload(b), rows, C])
    pre = f32(bf16(f32(x) + f32(b)))  # __hadd2 rounds the sum to bf16
    close(f32(dev.read(out, np.uint16, rows * C)).reshape(rows, C), _gelu(pre.astype(np.float64)), 1e-2, 1e-2, "bias gelu")

"""LayerNorm forward (3 versions, v3 in float and bf16) and backward (3 versions, v2 in both)."""
import numpy as np

from _corpus import bf16, case, close, f32

N, C = 13, 64  # rows that fill no block evenly


def _fwd_ref(x, w, b):
    x = x.astype(np.float64)
    m = x.mean(1, keepdims=True)
    s = 1 / np.sqrt(((x - m) ** 2).mean(1, keepdims=True) + 1e-5)
    return (x - m) * s * w + b, m.ravel(), s.ravel()


def _inputs(rng):
    return (rng.standard_normal((N, C)).astype(np.float32) * 2 + 1, rng.standard_normal(C).astype(np.float32),
            rng.standard_normal(C).astype(np.float32))


@case("llm_layernorm", kernels=3)
def layernorm_forward_fp32(dev, rng):
    x, w, b = _inputs(rng)
    want, wm, ws = _fwd_ref(x, w, b)
    for kernel, grid, block in (("layernorm_forward1", 1, 32), ("layernorm_forward2", 4, 128),
                                (dev.kernel("layernorm_forward3", "IfE"), 2, 256)):
        out, mean, rstd = dev.empty(N * C, np.float32), dev.empty(N, np.float32), dev.empty(N, np.float32)
        name = kernel if kernel.startswith("_Z") else dev.kernel(kernel)
        dev.launch(name, grid, block, [out, mean, rstd, dev.upload(x), dev.upload(w), dev.upload(b), N, C])
        close(dev.read(out, np.float32, N * C).reshape(N, C), want, 1e-4, 1e-4, kernel)
        close(dev.read(mean, np.float32, N), wm, 1e-5, 1e-5, kernel + " mean")
        close(dev.read(rstd, np.float32, N), ws, 1e-4, 1e-5, kernel + " rstd")


@case("llm_layernorm")
def layernorm_forward_bf16(dev, rng):
    x, w, b = (bf16(a) for a in _inputs(rng))
    want, wm, _ = _fwd_ref(f32(x), f32(w), f32(b))
    out, mean, rstd = dev.empty(N * C, np.uint16), dev.empty(N, np.float32), dev.empty(N, np.float32)
    dev.launch(dev.kernel("layernorm_forward3", "13__nv_bfloat16"), 4, 128,
               [out, mean, rstd, dev.upload(x), dev.upload(w), dev.upload(b), N, C])
    close(f32(dev.read(out, np.uint16, N * C)).reshape(N, C), want, 2e-2, 2e-2, "bf16 out")
    close(dev.read(mean, np.float32, N), wm, 1e-5, 1e-5, "bf16 mean")


def _bwd_ref(g, x, w, m, s):
    g, x = g.astype(np.float64), x.astype(np.float64)
    n = (x - m[:, None]) * s[:, None]
    dn = g * w
    dinp = (dn - dn.mean(1, keepdims=True) - n * (dn * n).mean(1, keepdims=True)) * s[:, None]
    return dinp, (g * n).sum(0), g.sum(0)


def _bwd_inputs(rng, cast=lambda a: a):
    x, w, _ = _inputs(rng)
    g = rng.standard_normal((N, C)).astype(np.float32)
    x, w, g = (f32(cast(a)) if cast is bf16 else a for a in (x, w, g))
    m = x.astype(np.float64).mean(1)
    s = 1 / np.sqrt(x.astype(np.float64).var(1) + 1e-5)
    return g, x, w, m.astype(np.float32), s.astype(np.float32)


@case("llm_layernorm")
def layernorm_backward_atomics(dev, rng):
    g, x, w, m, s = _bwd_inputs(rng)
    di, dw, db = _bwd_ref(g, x, w, m, s)
    pdi, pdw, pdb = dev.empty(N * C, np.float32), dev.zeros(C, np.float32), dev.zeros(C, np.float32)
    dev.launch("layernorm_backward1", 2, 256, [pdi, pdw, pdb] + [dev.upload(a) for a in (g, x, w, m, s)] + [N, C])
    close(dev.read(pdi, np.float32, N * C).reshape(N, C), di, 1e-4, 1e-4, "dinp")
    close(dev.read(pdw, np.float32, C), dw, 1e-4, 1e-4, "dweight")
    close(dev.read(pdb, np.float32, C), db, 1e-4, 1e-4, "dbias")


@case("llm_layernorm", kernels=2)
def layernorm_backward_last_block(dev, rng):
    for suffix, cast, tol, es in (("IfE", lambda a: a, 1e-4, 4), ("13__nv_bfloat16", bf16, 3e-2, 2)):
        g, x, w, m, s = _bwd_inputs(rng, cast)
        di, dw, db = _bwd_ref(g, x, w, m, s)
        dt = np.float32 if es == 4 else np.uint16
        back = (lambda a: a) if es == 4 else f32
        for grid in (1, 3):
            pdi, pdw, pdb = dev.empty(N * C, dt), dev.empty(C, dt), dev.empty(C, dt)
            scratch = dev.zeros(2 * C * grid + 1, np.float32)  # the host zeroes the counter
            dev.launch(dev.kernel("layernorm_backward2", suffix), grid, 128,
                       [pdi, pdw, pdb, scratch] + [dev.upload(cast(a)) for a in (g, x, w)]
                       + [dev.upload(m), dev.upload(s), N, C], shared=(2 * C + 1) * 4)
            close(back(dev.read(pdi, dt, N * C)).reshape(N, C), di, tol, tol, f"dinp {suffix} grid {grid}")
            close(back(dev.read(pdw, dt, C)), dw, tol, tol * 4, f"dweight {suffix} grid {grid}")
            close(back(dev.read(pdb, dt, C)), db, tol, tol * 4, f"dbias {suffix} grid {grid}")


@case("llm_layernorm")
def layernorm_backward_shared_scratch(dev, rng):
    g, x, w, m, s = _bwd_inputs(rng)
    di, dw, db = _bwd_ref(g, x, w, m, s)
    pdi, pdw, pdb = dev.empty(N * C, np.float32), dev.empty(C, np.uint16), dev.empty(C, np.uint16)
    scratch = dev.zeros(2 * C + 1, np.float32)
    dev.launch("layernorm_backward3", 3, 96, [pdi, pdw, pdb, scratch] + [dev.upload(a) for a in (g, x, w, m, s)]
               + [N, C], shared=2 * C * 4)
    close(dev.read(pdi, np.float32, N * C).reshape(N, C), di, 1e-4, 1e-4, "dinp")
    close(f32(dev.read(pdw, np.uint16, C)), dw, 1e-2, 5e-2, "dweight")
    close(f32(dev.read(pdb, np.uint16, C)), db, 1e-2, 5e-2, "dbias")

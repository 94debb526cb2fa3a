"""Encoder forward/backward, the fused classifier, AdamW (float and bf16 parameters)."""
import numpy as np

from _corpus import bf16, case, close

B, T, C, V = 2, 5, 16, 37


@case("llm_train", kernels=2)
def encoder(dev, rng):
    tok = rng.integers(0, 4, (B, T)).astype(np.int32)  # few tokens: the backward's atomics collide
    wte, wpe = rng.standard_normal((4, C)).astype(np.float32), rng.standard_normal((T, C)).astype(np.float32)
    out = dev.empty(B * T * C, np.float32)
    ptok = dev.upload(tok)
    dev.launch("encoder_forward_kernel3", 1, 64, [out, ptok, dev.upload(wte), dev.upload(wpe), B, T, C])
    close(dev.read(out, np.float32, B * T * C).reshape(B, T, C), wte[tok] + wpe[None], 1e-7, 0, "encoder fwd")
    dout = rng.standard_normal((B, T, C)).astype(np.float32)
    dwte, dwpe = dev.zeros(4 * C, np.float32), dev.zeros(T * C, np.float32)
    dev.launch("encoder_backward_kernel", 2, 32, [dwte, dwpe, dev.upload(dout), ptok, B, T, C])
    want = np.zeros((4, C))
    np.add.at(want, tok.ravel(), dout.reshape(-1, C).astype(np.float64))
    close(dev.read(dwte, np.float32, 4 * C).reshape(4, C), want, 1e-5, 1e-6, "dwte")
    close(dev.read(dwpe, np.float32, T * C).reshape(T, C), dout.astype(np.float64).sum(0), 1e-5, 1e-6, "dwpe")


@case("llm_train")
def fused_classifier(dev, rng):
    N = B * T
    logits = (rng.standard_normal((N, V)) * 3).astype(np.float32)
    tgt = rng.integers(0, V, N).astype(np.int32)
    losses, dlog = dev.empty(N, np.float32), dev.empty(N * V, np.float32)
    dev.launch("fused_classifier_kernel", N, 64, [losses, dlog, dev.upload(logits), dev.upload(tgt), N, V])
    x = logits.astype(np.float64)
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    close(dev.read(losses, np.float32, N), -np.log(p[np.arange(N), tgt]), 1e-5, 1e-6, "loss")
    p[np.arange(N), tgt] -= 1
    close(dev.read(dlog, np.float32, N * V).reshape(N, V), p / N, 1e-5, 1e-7, "dlogits")


@case("llm_train", kernels=2)
def adamw(dev, rng):
    n = 700
    w = rng.standard_normal(n).astype(np.float32)
    g, m, v = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    v = np.abs(v)
    lr, b1, b2, eps, wd, t = 1e-3, 0.9, 0.999, 1e-8, 0.01, 3
    b1c, b2c = 1 - b1 ** t, 1 - b2 ** t
    mw = b1 * m.astype(np.float64) + (1 - b1) * g
    vw = b2 * v.astype(np.float64) + (1 - b2) * g.astype(np.float64) ** 2
    pw = w - lr * ((mw / b1c) / (np.sqrt(vw / b2c) + eps) + wd * w)
    for suffix, dt in (("IfE", np.float32), ("13__nv_bfloat16", np.uint16)):
        params, master, pm, pv = dev.empty(n, dt), dev.upload(w), dev.upload(m), dev.upload(v)
        dev.launch(dev.kernel("adamw_kernel2", suffix), 2, 128,
                   [params, master, dev.upload(g), pm, pv, np.uint64(n), lr, b1, b2, b1c, b2c, eps, wd])
        close(dev.read(master, np.float32, n), pw, 1e-5, 1e-7, f"master {suffix}")
        close(dev.read(pm, np.float32, n), mw, 1e-5, 1e-7, f"m {suffix}")
        close(dev.read(pv, np.float32, n), vw, 1e-5, 1e-7, f"v {suffix}")
        got = dev.read(params, dt, n)
        if dt == np.uint16:
            assert (got == bf16(dev.read(master, np.float32, n))).all(), "bf16 params"

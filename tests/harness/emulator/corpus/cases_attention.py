"""Unfused causal attention: permute, scores, softmax, values, unpermute (five kernels)."""
import numpy as np

from _corpus import case, cdiv_, close


@case("llm_attention", kernels=5)
def attention_unfused(dev, rng):
    B, T, NH, HS = 2, 7, 3, 8
    C = NH * HS
    qkv = rng.standard_normal((B, T, 3 * C)).astype(np.float32)
    n = B * NH * T * HS
    q, k, v = (dev.empty(n, np.float32) for _ in range(3))
    dev.launch("permute_kernel", cdiv_(n, 128), 128, [q, k, v, dev.upload(qkv), B, T, NH, HS])
    preatt, att = dev.empty(B * NH * T * T, np.float32), dev.empty(B * NH * T * T, np.float32)
    dev.launch("attention_query_key_kernel1", cdiv_(B * NH * T * T, 64), 64, [preatt, q, k, B, T, NH, HS])
    dev.launch("attention_softmax_kernel1", cdiv_(B * NH * T, 32), 32, [att, preatt, B, T, NH])
    vals, out = dev.empty(n, np.float32), dev.empty(n, np.float32)
    dev.launch("attention_value_kernel1", cdiv_(B * NH * T, 32), 32, [vals, att, v, B, T, NH, HS])
    dev.launch("unpermute_kernel", cdiv_(n, 128), 128, [vals, out, B, T, NH, HS])
    x = qkv.astype(np.float64).reshape(B, T, 3, NH, HS).transpose(2, 0, 3, 1, 4)  # (3, B, NH, T, HS)
    s = x[0] @ x[1].transpose(0, 1, 3, 2) / np.sqrt(HS)
    s[:, :, np.triu(np.ones((T, T), bool), 1)] = -np.inf
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    close(dev.read(att, np.float32, B * NH * T * T).reshape(B, NH, T, T), p, 1e-5, 1e-7, "att")
    want = (p @ x[2]).transpose(0, 2, 1, 3).reshape(B, T, C)
    close(dev.read(out, np.float32, n).reshape(B, T, C), want, 1e-5, 1e-6, "attention out")

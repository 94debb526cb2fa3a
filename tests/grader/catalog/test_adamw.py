"""The adamw kata's reference: a float32 step (bias corrections by float32 pow) passes, eps under
the square root and a step that touches the padding fail, and the layout keeps tensors aligned."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)
F32 = np.float32


@pytest.fixture(scope="module")
def kata():
    return catalog.load("adamw")


def _float32_step(inputs, t, eps_inside=False, touch_padding=False):
    out = {k: inputs[k].copy() for k in ("p", "m", "v")}
    b1, b2, lr, eps = (F32(inputs[k]) for k in ("beta1", "beta2", "lr", "eps"))
    bc1, bc2 = F32(1) - b1 ** F32(t), F32(1) - b2 ** F32(t)
    for o, s, wd in zip(inputs["offsets"], inputs["sizes"], inputs["wd"]):
        sl = slice(o, o + s + (1 if touch_padding else 0))
        g = inputs["g"][sl]
        m = b1 * out["m"][sl] + (F32(1) - b1) * g
        v = b2 * out["v"][sl] + (F32(1) - b2) * g * g
        denom = np.sqrt(v / bc2 + eps) if eps_inside else np.sqrt(v / bc2) + eps
        out["p"][sl] = out["p"][sl] * (F32(1) - lr * wd) - (lr / bc1) * m / denom
        out["m"][sl], out["v"][sl] = m, v
    return out


def _fails(kata, inputs, params, got):
    expected = kata.reference.reference(inputs, **params)
    scale = kata.reference.error_scale(inputs, **params)
    return any(np.any(np.abs(got[k] - expected[k]) > kata.tolerance.c * EPS32 * scale[k]) for k in expected)


@pytest.mark.parametrize("t", [1, 2, 10, 100000])
def test_float32_step_passes(kata, t):
    params = {"T": 40, "large": 2, "big": 5000, "t": t}
    inputs = kata.reference.generate(np.random.default_rng(t), **params)
    assert not _fails(kata, inputs, params, _float32_step(inputs, t))


@pytest.mark.parametrize("bug", ["eps_inside", "touch_padding"])
def test_classic_mistakes_fail(kata, bug):
    params = {"T": 40, "large": 2, "big": 5000, "t": 3}
    inputs = kata.reference.generate(np.random.default_rng(0), **params)
    assert _fails(kata, inputs, params, _float32_step(inputs, 3, **{bug: True}))


def test_layout_aligned_with_padding_after_every_tensor(kata):
    inputs = kata.reference.generate(np.random.default_rng(2), T=3000, large=0, big=4, t=1)
    offsets, sizes = inputs["offsets"], inputs["sizes"]
    assert np.all(offsets % 4 == 0) and np.all(sizes >= 1)
    ends = np.append(offsets[1:], inputs["N"])
    assert np.all(ends - (offsets + sizes) >= 1)


def test_float32_step_passes_where_the_first_moment_cancels(kata):
    # An element of the bench case (seed 1) that a plain float32 step got "wrong" under the old
    # bound: b1 m and (1 - b1) g nearly cancel (m1 ~ 1e-3 of either term), so m1's rounding is
    # ~700 ulps of m1 itself, and with tiny weights the update's error is all of p's error.
    params = {"T": 4, "large": 1, "big": 64, "t": 1000}
    inputs = kata.reference.generate(np.random.default_rng(0), **params)
    inputs.update(lr=float(F32(3e-4)), beta2=float(F32(0.999)))
    at = int(inputs["offsets"][0])
    inputs["wd"][0] = F32(0.01)
    inputs["p"][at], inputs["g"][at] = F32(1.1230115887883585e-05), F32(1.619069662410766e-04)
    inputs["m"][at], inputs["v"][at] = F32(-1.79644011950586e-05), F32(1.781351594010161e-10)
    assert not _fails(kata, inputs, params, _float32_step(inputs, 1000))

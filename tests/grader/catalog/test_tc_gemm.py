"""The tc-gemm kata's reference: bf16 inputs round like __float2bfloat16, a float32 accumulation
of the exact products passes the bound, a dropped term and bf16 accumulation fail it."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def kata():
    return catalog.load("tc-gemm")


def test_bf16_rounding_is_nearest_even(kata):
    ref = kata.reference
    x = np.array([1.0, 1.00390625, 1.01171875, -3.0e38, 1e-40], np.float32)  # ties go to even
    bits = ref.to_bf16(x)
    assert bits.dtype == np.int16
    np.testing.assert_array_equal(ref.bf16_values(bits)[:3], [1.0, 1.0, 1.015625])


@pytest.mark.parametrize("dist", ["mixed", "offset", "cancel"])
def test_float32_accumulation_passes_and_mistakes_fail(kata, dist):
    ref = kata.reference
    params = {"M": 17, "N": 33, "K": 257, "dist": dist}
    inputs = ref.generate(np.random.default_rng(7), **params)
    assert inputs["A"].dtype == np.int16 and inputs["A"].shape == (17, 257)
    a, b = ref.bf16_values(inputs["A"]), ref.bf16_values(inputs["B"])
    assert np.count_nonzero(a) > 0 and len(np.unique(a)) > 10
    expected = ref.reference(inputs, **params)["C"]
    bound = kata.tolerance.c * EPS32 * ref.error_scale(inputs, **params)["C"]
    f32 = a.astype(np.float32) @ b.astype(np.float32)
    assert np.all(np.abs(f32 - expected) <= bound)
    dropped = a[:, :-1] @ b[:-1, :]
    assert np.any(np.abs(dropped - expected) > bound)
    in_bf16 = ref.bf16_values(ref.to_bf16(expected))  # a C rounded to bf16 (bf16 accumulator)
    assert np.any(np.abs(in_bf16 - expected) > bound)


def test_cost_and_bench(kata):
    assert kata.reference.cost(M=4096, N=4096, K=4096)["flops"] == 2 * 4096 ** 3
    assert kata.bench.cases == ({"M": 4096, "N": 4096, "K": 4096},) and kata.bench.metric == "library"

"""A bench case's reference and error scale made in shared passes (the scale from the reference's
outputs, or from what the reference computed on the same arrays) are bit for bit what the error
scale computes alone: the cut in input-making time changes no tolerance."""
import importlib.util

import numpy as np
import pytest

from grader import catalog
from grader.grading.cases import reference_params
from grader.grading.check import error_scales

CASES = {
    "reduce": [dict(n=1), dict(n=100_003, dist="offset"), dict(n=4097, dist="negative")],
    "layernorm": [dict(R=7, C=300, dist="normal"), dict(R=5, C=1025, dist="shifted")],
    "softmax": [dict(R=7, C=300, dist="normal"), dict(R=3, C=1025, dist="large")],
    "qgemv": [dict(N=37, K=300, dist="mixed"), dict(N=1030, K=1000, dist="negative")],
    "paged-attention": [dict(B=3, Hkv=2, G=2, Lmax=100, dist="powerlaw"), dict(B=2, Hkv=1, G=4, Lmax=40, dist="shared")],
}


def standalone(kata):
    """A fresh copy of the kata's reference module: nothing remembered from another call."""
    spec = importlib.util.spec_from_file_location(f"fresh_{kata.id.replace('-', '_')}", kata.folder / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("kata_id", sorted(CASES))
def test_shared_passes_give_the_same_scales_as_the_scale_alone(kata_id):
    kata = catalog.load(kata_id)
    fresh = standalone(kata)
    for case in CASES[kata_id]:
        inputs = kata.reference.generate(np.random.default_rng(11), **case)
        params = reference_params(kata, case, inputs)
        expected = kata.reference.reference(inputs, **params)
        shared = error_scales(kata, inputs, params, expected)  # as bench_inputs makes them
        alone = fresh.error_scale(inputs, **params)
        assert set(shared) == set(alone)
        for name in alone:
            assert np.array_equal(np.asarray(shared[name]), np.asarray(alone[name])), (kata_id, case, name)
        other = kata.reference.generate(np.random.default_rng(12), **case)  # not the arrays remembered
        got = error_scales(kata, other, reference_params(kata, case, other))
        want = fresh.error_scale(other, **reference_params(kata, case, other))
        assert all(np.array_equal(np.asarray(got[n]), np.asarray(want[n])) for n in want), (kata_id, case)

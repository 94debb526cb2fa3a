"""The transpose kata's reference: the exact transpose, and inputs where every misplaced element shows."""
import numpy as np

from grader import catalog

KATA = catalog.load("transpose")
ref = KATA.reference


def test_reference_is_the_transpose_with_every_value_distinct():
    A = ref.generate(np.random.default_rng(0), R=33, C=65)["A"]
    assert A.dtype == np.float32 and A.shape == (33, 65)
    assert np.unique(np.abs(A)).size == A.size and not np.any(A == 0)
    B = ref.reference({"A": A}, R=33, C=65)["B"]
    assert B.shape == (65, 33) and B.flags.c_contiguous and np.array_equal(B, A.T)


def test_a_tile_copied_without_transposing_it_fails():
    A = ref.generate(np.random.default_rng(1), R=32, C=32)["A"]
    B = ref.reference({"A": A}, R=32, C=32)["B"]
    assert np.all((B != A)[~np.eye(32, dtype=bool)])


def test_cases_cover_lines_primes_and_skinny_shapes():
    shapes = {(c["R"], c["C"]) for c in KATA.public}
    assert (1, 1) in shapes and any(r == 1 for r, _ in shapes) and any(c == 1 for _, c in shapes)
    assert any(r > 100 * c for r, c in shapes) and any(c > 100 * r for r, c in shapes)
    assert KATA.level == "warm-up"

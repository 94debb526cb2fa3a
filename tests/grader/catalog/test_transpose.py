"""The transpose kata's reference: the exact transpose, and inputs where every misplaced element shows."""
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from grader import catalog
from grader.cli import cli

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


@pytest.mark.slow
def test_memory_report_flags_the_naive_strided_store_and_not_the_tiled_solution(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    root = Path(__file__).parents[3]
    runner = CliRunner()

    def counters(folder):
        r = runner.invoke(cli, ["grade", str(folder), "--kata", "transpose", "--backend", "cpu", "--json"],
                          catch_exceptions=False)
        data = json.loads(r.output)
        assert r.exit_code == 0 and data["verdict"] == "pass", data["headline"]
        return data["counters"]

    naive = counters(root / "lab/variants/transpose/naive")
    tiled = counters(KATA.solution_dir)
    assert naive["store_sectors_per_request"] > 20 and tiled["store_sectors_per_request"] < 6
    assert any(h.startswith("kernel.cu:9:") and "per store request" in h for h in naive["hotspots"])
    assert tiled["bank_conflict_degree"] == 1.0 and tiled["moved_bytes"] < naive["moved_bytes"] / 3

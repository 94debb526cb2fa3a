"""lab/first_gpu_grade.py without a GPU: it says so and exits 2 at once, writing nothing; its
table plumbing, tried with --backend cpu on one kata, names the kata, its verdict and both times."""
import importlib.util
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "lab" / "first_gpu_grade.py"
spec = importlib.util.spec_from_file_location("first_gpu_grade", PATH)
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)


def test_without_a_gpu_it_exits_2_naming_why(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(script, "gpu_present", lambda: (False, "CuPy sees no CUDA GPU"))
    assert script.main(["vector-add", "--out", str(tmp_path)]) == 2
    assert "no GPU to grade on (CuPy sees no CUDA GPU)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_table_names_each_kata_with_both_grades(tmp_path, monkeypatch):
    monkeypatch.setattr(script, "grade", lambda kata_id, home, timeout, backend: dict(
        wall=12.5 if kata_id == "reduce" else 3.0, verdict="pass", headline="", phases={"data": 2.0}))
    assert script.main(["reduce", "vector-add", "--out", str(tmp_path), "--backend", "cpu"]) == 0
    text = (tmp_path / "first-gpu-grade.md").read_text()
    assert "| reduce | pass | 12.5 | 12.5 | data 2.0 | data 2.0 |" in text
    assert "| vector-add | pass | 3.0 | 3.0 |" in text and "(or not passing): reduce" in text

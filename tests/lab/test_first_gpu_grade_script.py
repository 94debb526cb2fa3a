"""lab/first_gpu_grade.py without a GPU: it says so and exits 2 at once, writing nothing; its
table plumbing, tried with --backend cpu, names each kata, its verdicts, the three grades (right
after `kata start`, the second, with the inputs made ahead) and where their time went."""
import importlib.util
from pathlib import Path


PATH = Path(__file__).resolve().parents[2] / "lab" / "first_gpu_grade.py"
spec = importlib.util.spec_from_file_location("first_gpu_grade", PATH)
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)


def test_without_a_gpu_it_exits_2_naming_why(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(script, "gpu_present", lambda: (False, "CuPy sees no CUDA GPU"))
    assert script.main(["vector-add", "--out", str(tmp_path)]) == 2
    assert "no GPU to grade on (CuPy sees no CUDA GPU)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_table_names_each_kata_with_its_three_grades(tmp_path, monkeypatch):
    walls = iter([12.5, 6.0, 7.0, 3.0, 2.0, 2.5])
    monkeypatch.setattr(script, "grade", lambda kata_id, folder, home, timeout, backend, ahead: dict(
        wall=next(walls), verdict="pass", headline="", phases={"data": 2.0}, grade={"compile": 1.5}))
    assert script.main(["reduce", "vector-add", "--out", str(tmp_path), "--backend", "cpu"]) == 0
    text = (tmp_path / "first-gpu-grade.md").read_text()
    assert "| reduce | pass/pass/pass | 12.5 | 6.0 | - | 7.0 |" in text
    assert "| vector-add | pass/pass/pass | 3.0 | 2.0 | - | 2.5 |" in text and "(or not passing): reduce\n" in text
    assert "- first: 12.5 s; grade steps: compile 1.5; performance phases: data 2.0" in text


def test_one_real_grade_after_kata_start_records_the_whole_grades_steps(tmp_path):
    """Through lab/grade_phases.py, in the workspace `kata start` made with the solution copied in."""
    home = tmp_path / "home"
    home.mkdir()
    ws, took = script.start("vector-add", home, ahead=False)
    assert (ws / ".kata").exists() and took > 0
    got = script.grade("vector-add", ws, home, 300, "cpu", ahead=False)
    assert got["verdict"] == "pass" and got["grade"]["compile"] > 0 and "grade total (in process)" in got["grade"]


def test_the_wait_for_inputs_made_ahead_ends_when_every_set_is_cached(tmp_path):
    home = tmp_path / "home"
    assert script.wait_inputs_ready("vector-add", home, 0.2) is None  # nothing made: gives up at the limit


def test_cold_adds_a_first_grade_without_kata_start(tmp_path, monkeypatch):
    seen = []

    def fake(kata_id, folder, home, timeout, backend, ahead):
        seen.append((folder.name, ahead, (folder / ".kata").exists()))
        return dict(wall=4.0, verdict="pass", headline="", phases={}, grade={})

    monkeypatch.setattr(script, "grade", fake)
    assert script.main(["vector-add", "--out", str(tmp_path), "--backend", "cpu", "--cold"]) == 0
    assert seen[-1] == ("vector-add", False, False)  # a plain folder: no kata start, nothing ahead
    assert "| vector-add | pass/pass/pass/pass | 4.0 | 4.0 | - | 4.0 |" in (tmp_path / "first-gpu-grade.md").read_text()
    assert "| 4.0 |\n" in (tmp_path / "first-gpu-grade.md").read_text()  # the cold column

"""lab/races_gpu.py (the device job of the schedule-bug corpus) in its dry mode: the same loop on
kata's emulator, so the script is known to run before it goes to the GPU."""
import importlib.util
import json
from pathlib import Path

LAB = Path(__file__).resolve().parents[2] / "lab"


def test_dry_run_records_wrong_answers_and_latent_bugs(tmp_path):
    spec = importlib.util.spec_from_file_location("races_gpu", LAB / "races_gpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main([str(tmp_path), "--dry", "--runs", "1", "--right-runs", "1", "--only", "histogram", "rotate"]) == 0
    rec = json.loads((tmp_path / "races_gpu.json").read_text())
    assert rec["cases"]["histogram"]["verdict"] == "wrong on the GPU"  # lockstep loses the updates here too
    assert rec["cases"]["rotate"]["verdict"] == "latent"  # lockstep hides the missing barrier
    assert rec["cases"]["rotate"]["right_wrong"] == 0

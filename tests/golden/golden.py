"""Grade every solution and one wrong kernel per kata on the CPU; write the JSON reports, less
what may differ between two runs of the same grade (times, absolute paths), as the golden files.

    python tests/golden/golden.py tests/golden/reports     # record (made before the house move)
test_golden.py regrades the same set and compares with the recorded files: a change of layout
must not change what a learner sees."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# One wrong kernel per kata, the one named first (sorted) when the golden files were made.
WRONG = {
    "attention": "causal_off_by_one", "bfs": "edge_loop_off_by_one", "histogram": "non_atomic_global_accumulation",
    "matmul": "missing_bounds_check", "reduce": "missing_syncthreads", "scan": "carry_not_propagated",
    "softmax": "exp_overflow", "spmv": "empty_rows_not_written", "topk": "missing_bounds_check",
}
# "estimate": the H200 model's estimate moves whenever its constants are refitted (its own tests,
# tests/grader/performance/test_model.py and tests/grader/cli/test_model_estimates.py, assert what it says)
VOLATILE = {"workspace", "seconds", "elapsed_s", "wall_s", "phases", "estimate"}


def normalise(report):
    if isinstance(report, dict):
        return {k: normalise(re.sub(r"; estimated .*$", "", v) if k == "headline" and isinstance(v, str) else v)
                for k, v in report.items() if k not in VOLATILE and k not in ("sources", "diagnostic")}
    if isinstance(report, list):
        return [normalise(v) for v in report]
    if isinstance(report, str):  # the folder graded is a temporary one for wrong kernels
        return re.sub(r"kata grade \S+", "kata grade <dir>", report.replace(str(ROOT), "<repo>"))
    return report


def grade(folder: Path, kata: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", str(folder), "--kata", kata,
                           "--backend", "cpu", "--json"], capture_output=True, text=True, cwd=ROOT)
    report = json.loads(proc.stdout)
    report["exit_code"] = proc.returncode
    return normalise(report)


def subjects_names():
    """(name, kata, bug or None for the solution) of every golden report."""
    for kata, bug in sorted(WRONG.items()):
        yield f"{kata}.solution", kata, None
        yield f"{kata}.{bug}", kata, bug


def wrong_folder(kata: str, bug: str, where: Path) -> Path:
    try:
        from grader.catalog import wrong
    except ImportError:  # the tree before wrong kernels were diffs: a full .cu beside the solution
        import shutil

        folder = where / bug
        folder.mkdir()
        shutil.copy(ROOT / "solutions" / kata / "wrong" / f"{bug}.cu", folder / "kernel.cu")
        shutil.copy(ROOT / "solutions" / kata / "launch.py", folder / "launch.py")
        return folder
    return wrong.materialise(kata, bug, where / bug)


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    import tempfile

    for name, kata, bug in subjects_names():
        folder = ROOT / "solutions" / kata if bug is None else wrong_folder(kata, bug, Path(tempfile.mkdtemp()))
        (out / f"{name}.json").write_text(json.dumps(grade(folder, kata), indent=1, sort_keys=True) + "\n")
        print(name)

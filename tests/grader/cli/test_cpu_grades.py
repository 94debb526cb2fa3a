"""The real thing on the CPU emulator: the shipped solution passes, the stub and each wrong kernel
fail for their stated reason (what `kata dev check reduce` proves, also run here as CI does)."""
import json
import shutil

import pytest

from grader import catalog
from grader.catalog import wrong

REDUCE = catalog.load("reduce")
WRONG = wrong.mistakes("reduce", REDUCE.solution_dir)


def test_the_solution_passes_on_the_cpu(kata):
    r = kata("grade", str(REDUCE.solution_dir), "--kata", "reduce", "--backend", "cpu", "--json")
    data = json.loads(r.output)
    assert r.exit_code == 0 and data["verdict"] == "pass", data["headline"]
    assert data["backend"] == "cpu" and data["performance"] is None
    assert data["counters"]["load_sectors_per_request"] == pytest.approx(16.0, abs=0.1)  # float4: 512 B per warp
    assert data["findings"] == []


def test_the_stub_fails_with_a_readable_report(kata, tmp_path):
    assert kata("start", "reduce", "ws").exit_code == 0
    r = kata("grade", "ws", "--backend", "cpu")
    assert r.exit_code == 1
    assert "FAIL" in r.output and "fails for n = 1: out[0] = 0, expected" in r.output
    assert "rerun: kata grade ws --backend cpu --case n=1" in r.output


@pytest.mark.parametrize("mistake", WRONG, ids=[m.name for m in WRONG])
def test_each_wrong_kernel_fails_for_its_reason(kata, tmp_path, mistake):
    kind = mistake.expect
    ws = wrong.materialise("reduce", mistake.name, tmp_path / mistake.name)
    r = kata("grade", str(ws), "--kata", "reduce", "--backend", "cpu", "--json", "--examples", "4")
    data = json.loads(r.output)
    assert r.exit_code == 1 and data["verdict"] == "fail"
    assert kind in data["reasons"], data["headline"]


def test_findings_name_the_learners_line(kata, tmp_path):
    ws = wrong.materialise("reduce", "missing_syncthreads", tmp_path / "race")
    r = kata("grade", str(ws), "--kata", "reduce", "--backend", "cpu", "--examples", "2")
    assert r.exit_code == 1 and "race-raw kernel.cu:14" in r.output
    assert "s[threadIdx.x] += s[threadIdx.x + step];" in r.output


@pytest.mark.slow
def test_dev_check_reduce(kata):
    r = kata("dev", "check", "reduce")
    assert r.exit_code == 0, r.output
    assert "28/28 checks passed" in r.output  # 12 of CUDA C, 8 each of the Triton and numba versions


def test_a_drawn_failure_is_shrunk_to_the_smallest_case_and_reruns(kata, tmp_path):
    ws = tmp_path / "planted"
    ws.mkdir()
    source = (REDUCE.solution_dir / "kernel.cu").read_text()
    bug = "    if (n > 6000 && n < 1000000 && n % 2 == 1) n -= 1;  // planted: drops the last element\n"
    (ws / "kernel.cu").write_text(source.replace("    const int n4 = n / 4;\n", bug + "    const int n4 = n / 4;\n"))
    shutil.copy(REDUCE.solution_dir / "launch.py", ws / "launch.py")
    r = kata("grade", str(ws), "--kata", "reduce", "--backend", "cpu", "--json")
    failure = json.loads(r.output)["correctness"]["first_failure"]
    assert r.exit_code == 1 and failure["origin"] == "drawn"
    assert failure["case"] == {"n": 6001, "dist": "mixed"}  # public cases miss it; hypothesis shrinks to 6001
    assert failure["message"].startswith("fails for n = 6001, dist = mixed: out[0] = ")
    rerun = failure["rerun"].split()[2:]
    r = kata("grade", *rerun)
    assert r.exit_code == 1 and "n = 6001" in r.output

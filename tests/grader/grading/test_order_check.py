"""The grade's order check (grader/pipeline/sanitizer.py order_stage): a result that depends on the order atomics arrive in
passes every case in the emulator's default lockstep order, and fails under another legal order,
named with the atomic's line and reproducible with `--case ... --case schedule=N`."""
import re

import pytest

from grader.errors import UsageError
from grader import pipeline

LAUNCH = '''def launch(gpu, topk_ids, x, counts, offsets, perm, gathered, N, E, D):
    gpu.launch("moe_dispatch", grid=1, block=1024, args=(topk_ids, x, counts, offsets, perm, gathered, N, E, D))
'''

KERNEL = r'''
extern "C" __global__ void moe_dispatch(const int* topk_ids, const float* x, int* counts, int* offsets,
                                        int* perm, float* gathered, int N, int E, int D) {
    __shared__ int fill[1024];
    int t = threadIdx.x;
    for (int e = t; e < E; e += blockDim.x) { counts[e] = 0; fill[e] = 0; }
    __syncthreads();
    for (int s = t; s < 2 * N; s += blockDim.x) atomicAdd(&counts[topk_ids[s]], 1);
    __syncthreads();
    if (t == 0) {
        int acc = 0;
        for (int e = 0; e < E; e++) { offsets[e] = acc; acc += counts[e]; }
    }
    __syncthreads();
    for (int s = t; s < 2 * N; s += blockDim.x) {
        int e = topk_ids[s];
        RANK
        perm[offsets[e] + rank] = s;
    }
    __syncthreads();
    for (int j = 0; j < 2 * N; j++)
        for (int d = t; d < D; d += blockDim.x) gathered[j * D + d] = x[(perm[j] / 2) * D + d];
}
'''
ARRIVAL = "int rank = atomicAdd(&fill[e], 1);  // MARK"
COUNTED = "int rank = 0; for (int u = 0; u < s; u++) rank += topk_ids[u] == e;"
CASE = {"N": 300, "E": 8, "D": 4}


def _folder(tmp_path, rank):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "kernel.cu").write_text(KERNEL.replace("RANK", rank))
    (tmp_path / "launch.py").write_text(LAUNCH)
    return tmp_path


def test_slots_in_arrival_order_fail_the_order_check_naming_the_atomic(tmp_path):
    report = pipeline.grade("moe-dispatch", _folder(tmp_path, ARRIVAL), backend="cpu", case=CASE)
    assert report.verdict == "fail" and report.stage == "sanitizer", report.headline
    assert report.reasons[0] == "order-dependent"
    line = KERNEL.replace("RANK", ARRIVAL).splitlines().index("        " + ARRIVAL) + 1
    assert f"default order, but order-dependent at kernel.cu:{line}" in report.headline
    assert "the order of atomics" in report.headline
    m = re.search(r"--case schedule=(\d+)", report.headline)
    assert m, report.headline
    again = pipeline.grade("moe-dispatch", tmp_path, backend="cpu", case={**CASE, "schedule": m[1]})
    assert again.verdict == "fail" and again.stage == "correctness", again.headline


def test_slots_counted_from_the_data_pass_under_every_schedule(tmp_path):
    report = pipeline.grade("moe-dispatch", _folder(tmp_path, COUNTED), backend="cpu", case=CASE, with_estimate=False)
    assert report.verdict == "pass", report.headline


def test_a_schedule_that_is_not_a_number_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="schedule"):
        pipeline.grade("moe-dispatch", _folder(tmp_path, COUNTED), backend="cpu", case={**CASE, "schedule": "x"})


# The offsets are scanned by the block's last thread right after the counting, with no barrier:
# it reads the counts atomically (so no race check names it) and takes its warp to run last.
LAST_WARP_SCAN = KERNEL.replace(
    """    __syncthreads();
    if (t == 0) {
        int acc = 0;
        for (int e = 0; e < E; e++) { offsets[e] = acc; acc += counts[e]; }
    }""",
    """    if (t == blockDim.x - 1) {
        int acc = 0;
        for (int e = 0; e < E; e++) { offsets[e] = acc; acc += atomicAdd(&counts[e], 0); }
    }""").replace("RANK", COUNTED)


def test_a_warp_that_assumes_it_runs_last_fails_the_order_check_naming_warps(tmp_path):
    assert LAST_WARP_SCAN != KERNEL.replace("RANK", COUNTED)
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "kernel.cu").write_text(LAST_WARP_SCAN)
    (tmp_path / "launch.py").write_text(LAUNCH)
    report = pipeline.grade("moe-dispatch", tmp_path, backend="cpu", case=CASE, with_estimate=False)
    assert report.verdict == "fail" and report.stage == "sanitizer", report.headline
    assert report.reasons[0] == "order-dependent"
    assert "order-dependent: with blocks and the warps of each block started in" in report.headline  # no '?:?'
    assert "the order of warps or blocks" in report.headline
    m = re.search(r"--case schedule=(\d+)", report.headline)
    assert m, report.headline
    again = pipeline.grade("moe-dispatch", tmp_path, backend="cpu", case={**CASE, "schedule": m[1]},
                           with_estimate=False)
    assert again.verdict == "fail" and again.stage == "correctness", again.headline

"""The launch plan's isolation on the GPU (docs/sandbox.md): the timing exploits GPU MODE and
KernelBench document, each a test that fails if the exploit works. Run on the device:
    python -m pytest -q -m gpu tests/gpu/test_plan_isolation_gpu.py
"""
import shutil
from pathlib import Path

import pytest

from grader.catalog import load
from grader import pipeline

pytestmark = pytest.mark.gpu


@pytest.fixture
def reduce_ws(tmp_path, kata_home):
    def make(launch: str | None = None, kernel: str | None = None) -> Path:
        kata = load("reduce")
        folder = tmp_path / "ws"
        shutil.copytree(kata.solution_dir, folder, dirs_exist_ok=True)
        shutil.rmtree(folder / "wrong", ignore_errors=True)
        if launch is not None:
            (folder / "launch.py").write_text(launch)
        if kernel is not None:
            (folder / "kernel.cu").write_text(kernel)
        return folder
    return make


def _solution_launch() -> str:
    return (load("reduce").solution_dir / "launch.py").read_text()


def test_the_solution_passes_with_its_plan_replayed(reduce_ws):
    r = pipeline.grade("reduce", reduce_ws(), backend="gpu", examples=2)
    assert r.verdict == "pass", r.headline
    assert r.performance is not None and r.score is not None and 0 < r.score < 1.5


def test_patching_timers_in_the_plan_changes_no_measurement(reduce_ws):
    """time.perf_counter and CuPy's events patched in launch.py: they live in the plan process,
    the worker measures; a score beyond the roofline would mean the patch worked."""
    patch = ("import time\ntime.perf_counter = lambda: 0.0\ntime.perf_counter_ns = lambda: 0\n"
             "try:\n    import cupy\n    cupy.cuda.get_elapsed_time = lambda a, b: 1e-9\nexcept Exception:\n    pass\n")
    r = pipeline.grade("reduce", reduce_ws(patch + _solution_launch()), backend="gpu", examples=2)
    assert r.verdict == "pass", r.headline
    assert r.score is not None and r.score < 1.5  # fraction of roofline: physics caps it near 1


def test_the_plan_cannot_use_the_gpu_itself(reduce_ws):
    """Work on another stream, or computing the answer with CuPy in the plan: the plan process may
    not open the device (Landlock: /dev/nvidia* are outside what it may read)."""
    plan = ("def launch(gpu, x, out, n):\n    import cupy\n    s = cupy.cuda.Stream(non_blocking=True)\n"
            "    cupy.zeros(1)\n")
    r = pipeline.grade("reduce", reduce_ws(plan), backend="gpu", examples=0)
    assert r.verdict == "fail" and "launch.py:" in r.headline, r.headline


def test_reading_the_kata_data_from_the_plan_fails(reduce_ws):
    plan = "def launch(gpu, x, out, n):\n    v = gpu._backend.download(x)\n"
    r = pipeline.grade("reduce", reduce_ws(plan), backend="gpu", examples=0)
    assert r.verdict == "fail" and "launch.py:2" in r.headline, r.headline


CACHING = '''__device__ int kata_done;
extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    if (kata_done) return;  // the answer of the first launch, kept: every later launch is free
    float s = 0.0f;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (int i = 0; i < n; ++i) s += x[i];
        atomicAdd(out, s);
        kata_done = 1;
    }
}
'''


def test_a_kernel_that_caches_its_first_answer_fails(reduce_ws):
    """KernelBench's caching exploit: outputs are poisoned before every run (checked and timed),
    so a launch that skips its work leaves NaN behind."""
    r = pipeline.grade("reduce", reduce_ws(kernel=CACHING), backend="gpu", examples=2)
    assert r.verdict == "fail", r.headline


MUTATING = '''extern "C" __global__ void reduce(float* x, float* out, int n)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = 0; i < n; ++i) s += x[i];
        atomicAdd(out, s);
        x[0] = 0.0f;  // mutating the input: a rerun with the same buffers would see other data
    }
}
'''


def test_a_kernel_that_mutates_its_input_fails(reduce_ws):
    r = pipeline.grade("reduce", reduce_ws(kernel=MUTATING), backend="gpu", examples=0)
    assert r.verdict == "fail" and "x" in r.headline, r.headline


def test_a_multi_launch_plan_with_host_reads_still_passes():
    """BFS's host loop reads a frontier count each level: replay checks each read, reruns on change."""
    kata = load("bfs")
    r = pipeline.grade("bfs", kata.solution_dir, backend="gpu", examples=2)
    assert r.verdict == "pass", r.headline


PRINTING = '''extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 3) printf("gpu thread %d of n=%d\\n", i, n);
    if (i < n) atomicAdd(out, x[i]);
}
'''


def test_device_printf_is_captured_and_shown(reduce_ws):
    plan = ("def launch(gpu, x, out, n):\n    gpu.memset(out, 0)\n"
            "    gpu.launch('reduce', grid=gpu.cdiv(n, 256), block=256, args=(x, out, n))\n")
    r = pipeline.grade("reduce", reduce_ws(plan, PRINTING), backend="gpu", case={"n": 5, "dist": "mixed"})
    note = next(n for n in r.notes if n.startswith("kernel printf"))
    for i in range(3):
        assert f"gpu thread {i} of n=5" in note

"""The learner's debugging tools in a kernel, on kata's CPU emulator: printf output shown per
thread in block and thread order, capped with a count of what was cut; recursion a learner-facing
error (exit 1, what to change), never a grader error. (assert(): test_bad_inputs.py.)"""
import pytest

from hostile_helpers import snapshot

PRINTING = '''extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < LIMIT) printf("i=%d x=%.2f n=%d %s %lld %u %x %c %5.1f%%\\n", i, x[i], n, "ok",
                          (long long)i * 1000000000LL, 4000000000u, 255, 'A', 12.5);
    if (i < n) atomicAdd(out, x[i]);
}
'''


@pytest.fixture
def cpu():
    """grade(...) on the CPU emulator."""
    from grader import pipeline

    return lambda *a, **k: pipeline.grade(*a, backend="cpu", **k)


def _note(report, start):
    return next(n for n in report.notes if n.startswith(start))


def test_printf_shows_each_thread_in_order(workspace, cpu):
    ws = workspace(kernel=PRINTING.replace("LIMIT", "n"))
    before = snapshot(ws)
    r = cpu(None, ws, case={"n": 5, "dist": "mixed"})
    assert r.verdict == "pass", r.headline
    note = _note(r, "kernel printf (case n = 5, dist = mixed)")
    lines = note.splitlines()[1:]
    assert len(lines) == 5 and "more lines cut" not in note
    for t, line in enumerate(lines):
        assert line.strip().startswith(f"reduce block (0,0,0) thread ({t},0,0): i={t} x=")
        assert line.endswith(f"n=5 ok {t * 1000000000} 4000000000 ff A  12.5%")
    assert snapshot(ws) == before


def test_printf_from_many_threads_is_capped_and_counted(workspace, cpu):
    ws = workspace(kernel=PRINTING.replace("LIMIT", "n"))
    r = cpu(None, ws, case={"n": 3000, "dist": "mixed"})
    note = _note(r, "kernel printf")
    shown = [line for line in note.splitlines()[1:] if line.strip().startswith("reduce block")]
    assert len(shown) == 60
    assert "2940 more lines cut" in note and "print from fewer threads" in note
    blocks = [line.split("thread")[0] for line in shown]
    assert blocks == sorted(blocks)  # block order first


RECURSIVE = '''__device__ float sum(const float* x, int lo, int hi)
{
    if (hi - lo <= 1) return lo < hi ? x[lo] : 0.0f;
    int mid = (lo + hi) / 2;
    return sum(x, lo, mid) + sum(x, mid, hi);
}
extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(out, sum(x, 0, n));
}
'''


def test_recursion_is_the_learners_error_with_what_to_change(kata, workspace, on_cpu):
    ws = workspace(kernel=RECURSIVE)
    before = snapshot(ws)
    code, out = kata("grade", ws, "--case", "n=5")
    assert code == 1, out
    assert "kernel.cu:5" in out and "recursively" in out and "rewrite the recursion as a loop" in out
    assert snapshot(ws) == before

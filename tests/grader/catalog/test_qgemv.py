"""The qgemv kata's reference: the packing is the statement's, the inputs are hostile (negative
nibbles, random padding, scales over decades), a float32 accumulation passes, the classic
mistakes (unsigned nibbles, a scale row rounded down, fp16 accumulation) fail."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def kata():
    return catalog.load("qgemv")


def test_packing_is_low_nibble_first_and_signed(kata):
    ref = kata.reference
    word = np.array([[0x7F801234 - (1 << 32)]], np.int64).astype(np.int32)  # nibbles 4,3,2,1,0,8,15,7
    np.testing.assert_array_equal(ref.unpack(word, 1, 8), [[4, 3, 2, 1, 0, -8, -1, 7]])
    np.testing.assert_array_equal(ref.unpack(word, 1, 3), [[4, 3, 2]])


def _case(kata, N, K, dist="mixed"):
    ref = kata.reference
    inputs = ref.generate(np.random.default_rng(3), N=N, K=K, dist=dist)
    return ref, inputs, ref.reference(inputs, N=N, K=K)["y"], \
        kata.tolerance.c * EPS32 * ref.error_scale(inputs, N=N, K=K)["y"]


def test_inputs_are_hostile(kata):
    ref, inputs, _, _ = _case(kata, 33, 1001, "negative")
    assert inputs["Wq"].shape == (33, 126) and inputs["scales"].shape == (33, 8) and inputs["x"].shape == (1001,)
    nib = ref.unpack(inputs["Wq"], 33, 126 * 8)
    assert (nib[:, :1001] < 0).mean() > 0.6 and len(np.unique(nib[:, 1001:])) > 1  # random padding
    s = np.abs(inputs["scales"].astype(np.float64))
    assert s.max() / s.min() > 100 and (inputs["scales"] < 0).any()


@pytest.mark.parametrize("K", [7, 129, 1000])
def test_float32_passes_and_classic_mistakes_fail(kata, K):
    N = 9
    ref, inputs, want, bound = _case(kata, N, K)
    w = ref.dequantised(inputs, N, K).astype(np.float32)
    x = inputs["x"].astype(np.float32)
    assert np.all(np.abs((w @ x) - want) <= bound)
    nib = ref.unpack(inputs["Wq"], N, K)
    s = np.repeat(inputs["scales"].astype(np.float64), 128, axis=1)[:, :K]
    unsigned = np.where(nib < 0, nib + 16, nib) * s @ x.astype(np.float64)
    assert np.any(np.abs(unsigned - want) > bound)
    in_half = np.zeros(N, np.float16)
    for k in range(K):  # fp16 accumulation
        in_half = (in_half + (w[:, k] * x[k]).astype(np.float16)).astype(np.float16)
    assert np.any(np.abs(in_half.astype(np.float64) - want) > bound)


def test_cost_counts_the_packed_bytes(kata):
    c = kata.reference.cost(N=4096, K=4096)
    assert c["bytes"] == 4096 * 4096 // 2 + 2 * 4096 * 32 + 2 * 4096 + 4 * 4096 and c["flops"] == 2 * 4096 ** 2


def _patched(kata, tmp_path, name):
    """The solution with wrong/<name>.patch applied, and the patched source's lines."""
    import shutil
    import subprocess

    sol = kata.solution_dir
    shutil.copy(sol / "kernel.cu", tmp_path / "kernel.cu")
    shutil.copy(sol / "launch.py", tmp_path / "launch.py")
    subprocess.run(["patch", "-s", str(tmp_path / "kernel.cu"), str(sol / "wrong" / f"{name}.patch")], check=True)
    return (tmp_path / "kernel.cu").read_text().splitlines()


def _line(lines, text):
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_the_stream_without_its_barrier_races_between_warps(kata, tmp_path):
    """A lane reads a row of the stage that another warp copied: the finding names the read, the
    other warp's cp.async and the missing __syncthreads(), not only the kind."""
    from grader import pipeline

    lines = _patched(kata, tmp_path, "stream_missing_barrier")
    r = pipeline.grade("qgemv", tmp_path, backend="cpu", examples=2)
    assert (r.verdict, r.stage, r.reasons) == ("fail", "sanitizer", ("race-raw",)), r.headline
    f = next(f for f in r.findings if f.kind == "race-raw")
    assert f.line == _line(lines, "const uint4 a = slot.w[g][c]") and f.other_line == _line(lines, "cp.async.cg.shared")
    assert f.thread[0] // 32 != f.other_thread[0] // 32  # written by another warp
    assert "with no __syncthreads()" in r.headline


def test_the_stream_without_its_wait_reads_copies_still_in_flight(kata, tmp_path):
    from grader import pipeline

    lines = _patched(kata, tmp_path, "stream_missing_cp_async_wait")
    r = pipeline.grade("qgemv", tmp_path, backend="cpu", examples=2)
    assert r.verdict == "fail" and "cp-async-unwaited" in r.reasons, r.headline
    f = next(f for f in r.findings if f.kind == "cp-async-unwaited")
    assert f.line == _line(lines, "const uint4 a = slot.w[g][c]") and f.other_line == _line(lines, "cp.async.cg.shared")
    assert "is still copying into it" in f.message


def test_the_solution_streams_every_decode_shape_and_rounds_the_rest(kata):
    """The launch plan's choice: K % 1024 == 0 (4096, 8192, and the public K = 1024, 3072 cases)
    takes the cp.async stream kernel; the ragged K = 4224 the rounds kernel."""
    from harness.backends.base import H200
    from harness.sandbox.launch_py import _load_launch

    launch = _load_launch(str(kata.solution_dir / "launch.py"))

    class Gpu:
        device = H200

        def __init__(self):
            self.names = []

        def cdiv(self, a, b):
            return -(-a // b)

        def launch(self, name, **kw):
            self.names.append(name)

    for K, name in [(1024, "qgemv_stream"), (3072, "qgemv_stream"), (8192, "qgemv_stream"), (4224, "qgemv"), (1000, "qgemv")]:
        gpu = Gpu()
        launch(gpu, None, None, None, None, 17, K)
        assert gpu.names == [name], K
    public = [c["K"] for c in kata.public]
    assert any(k % 1024 == 0 and k // 1024 >= 3 for k in public) and any(k % 1024 and k >= 4096 for k in public)


def test_the_error_scale_made_with_the_reference_is_used_only_for_the_same_arrays():
    """reference() makes the magnitudes' product in the same unpacking of the weights; error_scale
    returns it only for the very arrays it was made from, and computes anew for any others."""
    import numpy as np

    from grader import catalog
    from grader.grading.cases import reference_params
    from grader.grading.check import error_scales

    kata = catalog.load("qgemv")
    case = dict(N=37, K=300, dist="mixed")
    a = kata.reference.generate(np.random.default_rng(5), **case)
    b = kata.reference.generate(np.random.default_rng(6), **case)
    params = reference_params(kata, case, a)
    kata.reference.reference(a, **params)
    reused = error_scales(kata, a, params)["y"]
    fresh_b = error_scales(kata, b, params)["y"]  # not a's: computed
    kata.reference.reference(b, **params)
    assert np.array_equal(error_scales(kata, a, params)["y"], reused) and not np.array_equal(reused, fresh_b)
    assert np.array_equal(error_scales(kata, b, params)["y"], fresh_b)

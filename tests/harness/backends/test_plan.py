"""The launch-plan API refuses what no GPU would run, naming launch.py's line."""
import numpy as np
import pytest

from harness.frontends.nvrtc import compile
from harness.backends.plan import LaunchError, Plan

from fakes import FakeBackend

KERNEL = '''extern "C" __global__ void reduce(const float* x, float* out, int n) { if (n) atomicAdd(out, x[0]); }
extern "C" __global__ void scale(float* y, float a, unsigned long long n) { y[0] *= a; }
'''


@pytest.fixture(scope="module")
def ptx():
    return compile(KERNEL, "kernel.cu").ptx


def run_plan(tmp_path, ptx, body):
    path = tmp_path / "launch.py"
    path.write_text("def launch(gpu, x, out, n):\n" + "".join(f"    {line}\n" for line in body.splitlines()))
    backend = FakeBackend()
    backend.load(ptx, None, "kernel.cu")
    plan = Plan(backend, path)
    x = backend.upload(np.ones(8, np.float32))
    out = backend.upload(np.zeros(1, np.float32))
    namespace = {}
    exec(compile_py(path), namespace)
    namespace["launch"](plan, x, out, 8)
    return plan, backend, out


def compile_py(path):
    import builtins

    return builtins.compile(path.read_text(), str(path), "exec")


def error_of(tmp_path, ptx, body) -> LaunchError:
    with pytest.raises(LaunchError) as info:
        run_plan(tmp_path, ptx, body)
    return info.value


def test_a_valid_plan_launches_and_is_recorded(tmp_path, ptx):
    plan, backend, out = run_plan(tmp_path, ptx, 'gpu.launch("reduce", grid=gpu.cdiv(n, 256), block=256, args=(x, out, n))')
    assert backend.download(out)[0] == 8.0
    assert plan.launches[0].grid == (1, 1, 1) and plan.launches[0].block == (256, 1, 1)
    assert plan.launches[0].line == 2


def test_block_over_1024_threads(tmp_path, ptx):
    err = error_of(tmp_path, ptx, 'gpu.launch("reduce", grid=1, block=(64, 32), args=(x, out, n))')
    assert "2048 threads" in err.message and "at most 1024" in err.message
    assert (err.file, err.line) == ("launch.py", 2)
    assert "gpu.launch" in err.source


def test_block_z_limit_and_zero_grid(tmp_path, ptx):
    assert "block.z = 65" in error_of(tmp_path, ptx, 'gpu.launch("reduce", grid=1, block=(1, 1, 65), args=(x, out, n))').message
    assert "grid.x = 0" in error_of(tmp_path, ptx, 'gpu.launch("reduce", grid=0, block=32, args=(x, out, n))').message


def test_float_grid_is_refused(tmp_path, ptx):
    err = error_of(tmp_path, ptx, 'gpu.launch("reduce", grid=n / 256, block=256, args=(x, out, n))')
    assert "must hold ints" in err.message and "cdiv" in err.message


def test_too_much_shared_memory(tmp_path, ptx):
    err = error_of(tmp_path, ptx, 'gpu.launch("reduce", grid=1, block=32, args=(x, out, n), shared=300000)')
    assert "300000 bytes" in err.message and "at most 232448" in err.message


def test_unknown_kernel_name_suggests_the_closest(tmp_path, ptx):
    err = error_of(tmp_path, ptx, 'gpu.launch("reduc", grid=1, block=32, args=(x, out, n))')
    assert "no kernel named 'reduc'" in err.message and "did you mean 'reduce'" in err.message


def test_wrong_argument_count(tmp_path, ptx):
    err = error_of(tmp_path, ptx, 'gpu.launch("reduce", grid=1, block=32, args=(x, out))')
    assert "takes 3 arguments" in err.message and "passed 2" in err.message


def test_buffer_for_an_int_parameter(tmp_path, ptx):
    err = error_of(tmp_path, ptx, 'gpu.launch("reduce", grid=1, block=32, args=(x, out, out))')
    assert "argument 3" in err.message and "device buffer" in err.message


def test_float_for_an_int_parameter_is_not_truncated(tmp_path, ptx):
    err = error_of(tmp_path, ptx, 'gpu.launch("reduce", grid=1, block=32, args=(x, out, 8.5))')
    assert "float 8.5" in err.message


def test_number_for_a_pointer_and_numpy_arrays(tmp_path, ptx):
    assert "needs an int" not in error_of(
        tmp_path, ptx, 'import numpy\ngpu.launch("reduce", grid=1, block=32, args=(numpy.ones(3), out, n))').message
    err = error_of(tmp_path, ptx, 'gpu.launch("reduce", grid=1, block=32, args=("x", out, n))')
    assert "needs an int" in err.message and "device buffer" in err.message


def test_out_of_range_int(tmp_path, ptx):
    err = error_of(tmp_path, ptx, 'gpu.launch("reduce", grid=1, block=32, args=(x, out, 2**40))')
    assert "does not fit in 32 bits" in err.message


def test_floats_convert_for_float_params(tmp_path, ptx):
    plan, backend, _ = run_plan(tmp_path, ptx, 'y = gpu.zeros(4)\ngpu.launch("scale", grid=1, block=1, args=(y, 2, 4))')
    assert plan.launches[0].kernel == "scale"


def test_temporaries_memset_read_and_views(tmp_path, ptx):
    body = ('t = gpu.zeros(10, "int32")\n'
            'gpu.memset(t.view(2, 3), 1)\n'
            'assert gpu.read(t, 2) == 0x01010101 and gpu.read(t, 0) == 0\n'
            'assert t.size == 10 and t.nbytes == 40 and gpu.device.max_threads_per_block == 1024')
    run_plan(tmp_path, ptx, body)
    assert "outside a buffer" in error_of(tmp_path, ptx, 't = gpu.zeros(4)\ngpu.read(t, 4)').message
    assert "0..255" in error_of(tmp_path, ptx, 't = gpu.zeros(4)\ngpu.memset(t, 256)').message


SIGNED = '''extern "C" __global__ void shift(float* y, int a, long long b, unsigned short c) { y[0] = a + b + c; }'''


def launched_args(tmp_path, *values):
    """The scalars the backend receives for shift(y, a, b, c), or the LaunchError."""
    (tmp_path / "launch.py").write_text("def launch(gpu, y, a, b, c):\n"
                                        "    gpu.launch('shift', grid=1, block=1, args=(y, a, b, c))\n")
    backend = FakeBackend()
    backend.load(compile(SIGNED, "kernel.cu").ptx, None, "kernel.cu")
    seen = []
    backend.launch = lambda name, grid, block, shared, args: seen.append(args)
    namespace = {}
    exec(compile_py(tmp_path / "launch.py"), namespace)
    namespace["launch"](Plan(backend, tmp_path / "launch.py"), backend.alloc(1, "float32"), *values)
    return seen[0][1:]


def test_negative_ints_pass_as_their_bit_pattern(tmp_path):
    # NVRTC declares `int` as .u32 and `long long` as .u64: the signedness lives in the instructions.
    a, b, c = launched_args(tmp_path, -3, -(2**63), 65535)
    assert (a.dtype, int(a)) == (np.uint32, 2**32 - 3)
    assert (b.dtype, int(b)) == (np.uint64, 2**63)
    assert int(np.array(a).view(np.int32)) == -3 and int(c) == 65535
    a, b, _ = launched_args(tmp_path, 2**32 - 1, np.int64(-1), 0)
    assert int(a) == 2**32 - 1 and int(b) == 2**64 - 1


@pytest.mark.parametrize("values, message", [
    ((-(2**31) - 1, 0, 0), "argument 2 of shift (PTX u32): -2147483649 does not fit in 32 bits"),
    ((2**32, 0, 0), "4294967296 does not fit in 32 bits"),
    ((0, 2**64, 0), "does not fit in 64 bits"),
    ((0, 0, -(2**15) - 1), "does not fit in 16 bits"),
    ((-3.0, 0, 0), "is an integer but launch.py passed the float -3.0"),
])
def test_ints_that_fit_no_width_and_floats_are_refused_at_the_line(tmp_path, values, message):
    with pytest.raises(LaunchError) as info:
        launched_args(tmp_path, *values)
    assert message in info.value.message
    assert (info.value.file, info.value.line) == ("launch.py", 2) and "gpu.launch" in info.value.source


def test_a_valid_launch_neither_reads_launch_py_nor_resolves_paths_each_time(tmp_path, ptx, monkeypatch):
    # Multi-launch plans (BFS: one launch per level) are timed on the GPU: the line lookup must be cheap.
    import pathlib

    calls = {"read_text": 0, "resolve": 0}
    for method in calls:
        real = getattr(pathlib.Path, method)

        def counting(self, *a, _real=real, _name=method, **k):
            calls[_name] += 1
            return _real(self, *a, **k)
        monkeypatch.setattr(pathlib.Path, method, counting)
    plan, _, _ = run_plan(tmp_path, ptx, 'for _ in range(50):\n'
                                         '    gpu.launch("reduce", grid=1, block=32, args=(x, out, n))')
    launch_reads = calls["read_text"] - 1  # run_plan reads launch.py once to exec it
    assert len(plan.launches) == 50 and {r.line for r in plan.launches} == {3}
    assert launch_reads == 0 and calls["resolve"] < 10, calls

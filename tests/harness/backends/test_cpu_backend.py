"""The CPU backend on the real emulator, driven through the launch-plan API."""
import numpy as np
import pytest

from harness.frontends.nvrtc import compile
from harness.backends.cpu import CpuBackend
from harness.backends.plan import LaunchError, Plan

SOURCE = '''
__global__ void add_one(float* y, long long n)      // no extern "C": a mangled entry
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] += 1.0f;
}
extern "C" __global__ void spin(int* flag)
{
    while (atomicAdd(flag, 0) == 0) { }
}
'''


@pytest.fixture(scope="module")
def ptx():
    result = compile(SOURCE, "kernel.cu")
    assert result.ok, result.log
    return result.ptx


def test_mangled_names_resolve_and_counters_sum_over_launches(ptx, tmp_path):
    backend = CpuBackend(counters=True)
    backend.load(ptx, None, "kernel.cu")
    assert backend.kernel_names() == ["add_one", "spin"]
    assert [p.type for p in backend.kernel_params("add_one")] == ["u64", "u64"]
    plan = Plan(backend, tmp_path / "launch.py")
    y = backend.upload(np.arange(1000, dtype=np.float32))
    for _ in range(2):
        plan.launch("add_one", grid=plan.cdiv(1000, 128), block=128, args=(y, 1000))
    assert np.array_equal(backend.download(y), np.arange(1000, dtype=np.float32) + 2)
    assert plan.read(y, 999) == 1001.0
    summary = backend.counters()
    assert summary.kernels == ("add_one", "add_one")
    assert summary.total.bytes_read == 2 * 4000 and summary.total.bytes_written == 2 * 4000
    assert all(t.file.endswith("kernel.cu") for t in summary.per_line.values())
    with pytest.raises(LaunchError, match="did you mean 'add_one'"):
        plan.launch("add_on", grid=1, block=1, args=(y, 1))


def test_a_hang_becomes_a_watchdog_finding(ptx, tmp_path):
    backend = CpuBackend(wall_clock_s=1.0)
    backend.load(ptx, None, "kernel.cu")
    flag = backend.upload(np.zeros(1, np.int32))
    Plan(backend, tmp_path / "launch.py").launch("spin", grid=1, block=32, args=(flag,))
    assert backend.stopped and [f.kind for f in backend.findings] == ["watchdog"]


def test_a_negative_int_reaches_the_kernel_as_the_learner_wrote_it(tmp_path):
    source = 'extern "C" __global__ void put(float* y, int a, long long b) { y[0] = a; y[1] = (float)b; }'
    backend = CpuBackend()
    backend.load(compile(source, "kernel.cu").ptx, None, "kernel.cu")
    y = backend.upload(np.zeros(2, np.float32))
    Plan(backend, tmp_path / "launch.py").launch("put", grid=1, block=1, args=(y, -3, -(2**40)))
    assert backend.download(y).tolist() == [-3.0, -(2.0**40)]


def test_copy_and_bytewise_equal():
    backend = CpuBackend()
    x = np.linspace(-1, 1, 1001, dtype=np.float32)
    a, b = backend.upload(x), backend.alloc(1001, np.float32)
    backend.copy(b, a)
    assert backend.equal(a, b) and np.array_equal(backend.download(b), x)
    y = x.copy()
    y.view(np.uint8)[-1] ^= 1
    assert not backend.equal(a, backend.upload(y))
    assert not backend.equal(a, a.view(0, 1000))  # another size is never equal
    assert backend.equal(a.view(3, 10), b.view(3, 10)) and not backend.equal(a.view(0, 10), a.view(1, 10))
    zero, negzero = backend.upload(np.array([0.0], np.float32)), backend.upload(np.array([-0.0], np.float32))
    assert not backend.equal(zero, negzero)  # bytes, not values
    nan = backend.upload(np.array([np.nan], np.float32))
    assert backend.equal(nan, nan)
    assert backend.equal(backend.alloc(0, np.float32), backend.alloc(0, np.int8))

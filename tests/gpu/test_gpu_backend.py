"""The CuPy backend: buffers, views, memset, launches through the launch-plan API."""
import numpy as np
import pytest

from harness.frontends.nvrtc import compile as nvrtc_compile
from harness.backends.plan import Plan

pytestmark = pytest.mark.gpu

SRC = r"""
extern "C" __global__ void axpb(float* y, const float* x, float a, int n, long long b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + (float)b;
}
__global__ void mangled(int* out, int v) { out[threadIdx.x] = v + threadIdx.x; }
"""


@pytest.fixture()
def loaded(backend):
    res = nvrtc_compile(SRC, "kernel.cu", cubin=True)
    assert res.ok and res.cubin, res.log
    backend.load(res.ptx, res.cubin, "kernel.cu")
    return backend


def test_roundtrip_memset_and_view(backend):
    x = np.arange(1000, dtype=np.float32) - 300.5
    buf = backend.upload(x)
    assert np.array_equal(backend.download(buf), x)
    assert np.array_equal(backend.download(buf.view(10, 5)), x[10:15])
    backend.memset(buf.view(0, 4), 0xFF)
    assert np.isnan(backend.download(buf)[:4]).all() and backend.download(buf)[4] == x[4]


def test_launch_through_plan_with_converted_scalars(loaded, tmp_path):
    x = np.linspace(-1, 1, 1001, dtype=np.float32)
    xb, yb = loaded.upload(x), loaded.alloc(1001, np.float32)
    plan = Plan(loaded, tmp_path / "launch.py")
    plan.launch("axpb", grid=plan.cdiv(1001, 128), block=128, args=(yb, xb, 2.0, 1001, 3))
    loaded.synchronize()
    assert np.allclose(loaded.download(yb), 2 * x + 3)
    assert loaded.kernel_params("axpb")[4].type in ("s64", "u64")


def test_mangled_kernel_found_by_name(loaded, tmp_path):
    out = loaded.alloc(32, np.int32)
    Plan(loaded, tmp_path / "launch.py").launch("mangled", grid=1, block=32, args=(out, 7))
    loaded.synchronize()
    assert list(loaded.download(out)) == list(range(7, 39))
    assert ("mangled" in loaded.kernel_names())


def test_facts_are_the_devices(backend):
    f = backend.facts
    assert f.sm_count > 0 and f.warp_size == 32 and f.l2_bytes > 0 and f.max_shared_per_block_optin >= 48 * 1024


@pytest.mark.parametrize("dtype, n", [(np.float32, 1001), (np.uint8, 37), (np.float64, 5), (np.int16, 4097),
                                      (np.uint32, 1 << 20)])
def test_equal_compares_bytes_on_the_device(backend, dtype, n):
    x = (np.arange(n) * 7 % 251).astype(dtype)
    a, b = backend.upload(x), backend.upload(x)
    assert backend.equal(a, b)
    y = x.copy()
    y.view(np.uint8)[-1] ^= 1
    assert not backend.equal(a, backend.upload(y))
    y = x.copy()
    y.view(np.uint8)[0] ^= 0x80
    assert not backend.equal(backend.upload(y), b)
    assert backend.equal(a.view(1, n - 2), b.view(1, n - 2))  # unaligned views: a narrower word
    assert not backend.equal(a.view(0, n - 1), a.view(1, n - 1))
    assert not backend.equal(a, a.view(0, n - 1))


def test_equal_is_bytewise_and_copy_keeps_bytes(backend):
    zero, negzero = backend.upload(np.array([0.0], np.float32)), backend.upload(np.array([-0.0], np.float32))
    assert not backend.equal(zero, negzero)
    nan = backend.upload(np.full(3, np.nan, np.float32))
    kept = backend.alloc(3, np.float32)
    backend.copy(kept, nan)
    assert backend.equal(nan, kept)
    assert backend.equal(backend.alloc(0, np.float32), backend.alloc(0, np.float32))

"""gpu.tensor_map: cuTensorMapEncodeTiled's fields and checks in the launch plan, a map a TMA kernel
reads on the CPU backend, and each malformed map a LaunchError naming launch.py's line."""
import numpy as np
import pytest

from harness.backends.cpu import CpuBackend
from harness.backends.plan import LaunchError, Plan
from harness.frontends.nvrtc import compile

KERNEL = r'''
struct __align__(64) TensorMap { unsigned long long words[16]; };
extern "C" __global__ void box(const __grid_constant__ TensorMap map, float* out, int col, int row) {
    __shared__ __align__(128) float tile[4 * 32];
    __shared__ __align__(8) unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar), s = (unsigned)__cvta_generic_to_shared(tile);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 512;" :: "r"(b) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                     "[%0], [%1, {%2, %3}], [%4];"
                     :: "r"(s), "l"(&map), "r"(col), "r"(row), "r"(b) : "memory");
    }
    __syncthreads();
    unsigned ok = 0;
    while (!ok) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                             : "=r"(ok) : "r"(b) : "memory");
    out[threadIdx.x] = tile[threadIdx.x];
}
'''
GOOD = "m = gpu.tensor_map(x, global_dim=(40, 10), global_strides=(160,), box_dim=(32, 4))"


@pytest.fixture(scope="module")
def ptx():
    r = compile(KERNEL, "kernel.cu")
    assert r.ok, r.log
    return r.ptx


def run_plan(tmp_path, ptx, first_line, counters=False):
    path = tmp_path / "launch.py"
    path.write_text(f"def launch(gpu, x, out):\n    {first_line}\n"
                    "    gpu.launch('box', grid=1, block=128, args=(m, out, 16, 8))\n")
    backend = CpuBackend(sanitize=True, counters=counters)
    backend.load(ptx, None, "kernel.cu")
    plan = Plan(backend, path)
    x = backend.upload(np.arange(400, dtype=np.float32))
    out = backend.upload(np.zeros(128, np.float32))
    namespace = {}
    exec(compile_py(path), namespace)
    namespace["launch"](plan, x, out)
    return backend, out


def compile_py(path):
    import builtins

    return builtins.compile(path.read_text(), str(path), "exec")


def test_a_tma_kernel_reads_the_box_the_plan_mapped(tmp_path, ptx):
    backend, out = run_plan(tmp_path, ptx, GOOD)
    got = backend.download(out).reshape(4, 32)
    x = np.arange(400, dtype=np.float32).reshape(10, 40)
    want = np.zeros((4, 32), np.float32)
    want[:2, :24] = x[8:10, 16:40]  # rows 10, 11 and columns 40.. are outside: TMA fills zeros
    np.testing.assert_array_equal(got, want)
    assert backend.findings == []


def test_the_copy_engines_reads_are_one_request_of_the_boxs_sectors(tmp_path, ptx):
    """The box's in-bounds part is rows 8-9, columns 16-39: 96 bytes a row at byte 1344 and 1504, three
    32-byte sectors each. The counters (and the model's cache records) see them as one load request."""
    backend, _ = run_plan(tmp_path, ptx, GOOD, counters=True)
    t = backend.counters().total
    tma = t.global_load_requests, t.global_load_sectors, t.global_load_ideal_sectors
    assert tma == (1, 6, 6) and t.bytes_read == 6 * 32


@pytest.mark.parametrize("line, words", [
    ("m = gpu.tensor_map(x, global_dim=(40, 10), global_strides=(150,), box_dim=(32, 4))", "multiples of 16"),
    ("m = gpu.tensor_map(x, global_dim=(40, 10), global_strides=(160,), box_dim=(30, 4))", "multiple of 16 bytes"),
    ("m = gpu.tensor_map(x, global_dim=(40, 10), global_strides=(160,), box_dim=(32, 4), swizzle='64B')",
     "at most 64 bytes"),
    ("m = gpu.tensor_map(x, global_dim=(40, 20), global_strides=(160,), box_dim=(32, 4))", "buffer holds 1600"),
    ("m = gpu.tensor_map(x, global_dim=(40, 10), global_strides=(160,), box_dim=(32, 300))", "1 to 256"),
    ("m = gpu.tensor_map(x, global_dim=(40, 10), global_strides=(160, 1600), box_dim=(32, 4))", "1 values"),
])
def test_a_map_that_does_not_fit_is_a_launch_error_with_its_line(tmp_path, ptx, line, words):
    with pytest.raises(LaunchError) as info:
        run_plan(tmp_path, ptx, line)
    assert info.value.line == 2 and words in info.value.message, info.value.message

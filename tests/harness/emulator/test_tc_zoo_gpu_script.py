"""lab/tc_zoo_gpu.py's CPU half: the emulator against a second device (here another emulator),
one line per case and size, exit 1 on a mismatch."""
import importlib.util
from pathlib import Path

import numpy as np

PATH = Path(__file__).resolve().parents[3] / "lab" / "tc_zoo_gpu.py"
spec = importlib.util.spec_from_file_location("tc_zoo_gpu", PATH)
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)


def test_self_check_prints_ok_for_every_size_and_exits_0(capsys):
    assert script.main(["--self-check", "--only", "dp4a_dot", "cg_tile_reduce"]) == 0
    lines = capsys.readouterr().out.splitlines()
    cases = script.tensor_cases()
    assert len(lines) == len(cases["dp4a_dot"][1]) + len(cases["cg_tile_reduce"][1]) + 1
    assert all(line.startswith("ok   ") for line in lines[:-1]) and lines[-1] == "all agree"
    assert set(cases) >= {"wmma_gemm", "mma_ldmatrix_gemm", "cp_async_gemm", "dp4a_dot", "cg_tile_reduce"}


class Skewed:
    """A device whose float outputs are off by 1e-3 relative: what a wrong layout or rounding is."""

    def __init__(self, stem):
        import _zoo

        self.dev = _zoo.Device(stem, sanitize=False, counters=False)

    def __getattr__(self, name):
        return getattr(self.dev, name)

    def read(self, ptr, dtype, count):
        out = self.dev.read(ptr, dtype, count)
        return out * np.float32(1.001) if out.dtype.kind == "f" else out


def test_a_device_that_disagrees_fails_its_lines_and_exits_1(capsys):
    assert script.main(["--only", "cg_tile_reduce"], make_device=Skewed) == 1
    out = capsys.readouterr().out
    assert "FAIL cg_tile_reduce" in out and "device:" in out  # its numpy check catches it first


def test_agree_is_exact_for_integers_and_ulp_scaled_for_floats():
    assert script.agree(np.array([3, -4], np.int32), np.array([3, -4], np.int32))[0]
    assert not script.agree(np.array([3], np.int32), np.array([4], np.int32))[0]
    x = np.linspace(-100, 100, 50).astype(np.float32)
    assert script.agree(x, x + np.float32(1e-4))[0]
    assert not script.agree(x, x * np.float32(1.01))[0]
    h = x.astype(np.float16)
    assert script.agree(h, np.nextafter(h, np.float16(np.inf)))[0]  # an f16 accumulator's last bit
    assert not script.agree(h, -h)[0]

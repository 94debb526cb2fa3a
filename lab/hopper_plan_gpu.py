"""gpu.tensor_map on a GPU: the launch plan's tensor map (the driver's cuTensorMapEncodeTiled, passed
by value as a __grid_constant__ CUtensorMap) read by the TMA kernel of
tests/harness/backends/test_plan_tensor_map.py, against the same numpy answer the CPU test checks.

    python3 lab/hopper_plan_gpu.py     # on a GPU machine; prints ok or what differs, exit 0/1
"""
from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from harness.backends.gpu import GpuBackend
    from harness.backends.plan import Plan
    from harness.frontends.nvrtc import compile

    spec = importlib.util.spec_from_file_location("tmap_test", ROOT / "tests/harness/backends/test_plan_tensor_map.py")
    test = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(test)
    r = compile(test.KERNEL, "kernel.cu", cubin=True)
    if not r.ok:
        print("FAIL compile:", r.log)
        return 1
    backend = GpuBackend()
    backend.load(r.ptx, r.cubin, "kernel.cu")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "launch.py"
        path.write_text(f"def launch(gpu, x, out):\n    {test.GOOD}\n"
                        "    gpu.launch('box', grid=1, block=128, args=(m, out, 16, 8))\n")
        plan = Plan(backend, path)
        x = backend.upload(np.arange(400, dtype=np.float32))
        out = backend.upload(np.zeros(128, np.float32))
        ns: dict = {}
        exec(test.compile_py(path), ns)
        ns["launch"](plan, x, out)
        backend.synchronize()
    got = np.asarray(backend.download(out)).reshape(4, 32)
    xs = np.arange(400, dtype=np.float32).reshape(10, 40)
    want = np.zeros((4, 32), np.float32)
    want[:2, :24] = xs[8:10, 16:40]
    ok = np.array_equal(got, want)
    print("ok   plan tensor_map on the GPU: the box matches" if ok else f"FAIL plan tensor_map: got\n{got}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

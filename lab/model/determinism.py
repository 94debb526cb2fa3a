"""The same kernel's H200 estimate, made twice: once on an idle machine and once with every core
busy (a spinning process per core). The model's budget is counted in emulated work, so the two
must agree to every digit; the wall time of each is printed for the record (it does change).

    python lab/model/determinism.py [KATA FOLDER]   (default: reduce and its solution)
"""
from __future__ import annotations

import importlib.util
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _spin(stop):
    while not stop.is_set():
        pass


def estimate_once(kata_id: str, folder: Path) -> dict:
    from grader import catalog
    from grader.performance.model import estimate
    from grader.performance.model.observe import observe_in_worker
    from harness.frontends import nvrtc

    compiled = nvrtc.compile((folder / "kernel.cu").read_text(), "kernel.cu", cubin=True)
    spec = importlib.util.spec_from_file_location("plan", folder / "launch.py")
    plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plan)
    started = time.monotonic()
    obs = observe_in_worker(plan.launch, str(folder / "launch.py"), kata_id, compiled.ptx, "kernel.cu", 0,
                            registers={k: r.registers for k, r in compiled.resources.items()})
    e = estimate(catalog.load(kata_id), obs, compiled.resources)
    return {"headline": e.headline(), "seconds": [c.seconds for c in e.cases],
            "wall_s": round(time.monotonic() - started, 2)}


def main() -> None:
    kata_id = sys.argv[1] if len(sys.argv) > 1 else "reduce"
    folder = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "solutions" / kata_id
    idle = estimate_once(kata_id, folder)
    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=_spin, args=(stop,)) for _ in range(os.cpu_count() or 2)]
    for p in spinners:
        p.start()
    try:
        busy = estimate_once(kata_id, folder)
    finally:
        stop.set()
        for p in spinners:
            p.join()
    same = idle["seconds"] == busy["seconds"] and idle["headline"] == busy["headline"]
    print(json.dumps({"kata": kata_id, "folder": str(folder.relative_to(ROOT)) if folder.is_relative_to(ROOT) else str(folder),
                      "idle": idle, "busy": busy, "identical": same}, indent=1))
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()

"""The model's cost on each kata's solution, counted in emulated work (instruction issues, the
budget's unit: the same on any machine) with the wall time of this run beside it (which is not).

    python lab/model/model_cost.py [KATA ...]   -> a markdown table on stdout
"""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cost(kata_id: str) -> tuple[int, float, str]:
    from grader.performance.model import observe
    from harness.frontends import nvrtc

    folder = ROOT / "solutions" / kata_id
    compiled = nvrtc.compile((folder / "kernel.cu").read_text(), "kernel.cu", cubin=True)
    spec = importlib.util.spec_from_file_location(f"plan_{kata_id.replace('-', '_')}", folder / "launch.py")
    plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plan)
    real, issued = observe.model_run, []

    def counted(*args, **kwargs):
        result = real(*args, **kwargs)
        issued.append(result[4])
        return result

    observe.model_run = counted
    try:
        started = time.monotonic()
        obs = observe.observe_in_worker(plan.launch, str(folder / "launch.py"), kata_id, compiled.ptx, "kernel.cu", 0,
                                        registers={k: r.registers for k, r in compiled.resources.items()})
        wall = time.monotonic() - started
    finally:
        observe.model_run = real
    return sum(issued), wall, ", ".join(sorted({o.method for o in obs}))


def main() -> None:
    from grader import catalog

    katas = sys.argv[1:] or catalog.ids()
    print("| kata | instruction issues | wall s (this machine, this load) | made |")
    print("|---|---|---|---|")
    for k in katas:
        try:
            n, wall, how = cost(k)
            print(f"| {k} | {n:,} | {wall:.1f} | {how} |", flush=True)
        except Exception as exc:  # recorded; the others go on
            print(f"| {k} | - | - | {type(exc).__name__}: {str(exc)[:60]} |", flush=True)


if __name__ == "__main__":
    main()

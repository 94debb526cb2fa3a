"""The model's cost on each kata's solution, counted in emulated work (the budget's unit: lanes
weighted by opcode plus a fixed cost per issue, harness/emulator/engine.py; the same on any machine)
and instruction issues, with this process's CPU seconds beside them (which depend on the machine
and, less than wall time, on its load).

    python lab/model/model_cost.py [KATA ...]   -> a markdown table on stdout
"""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cost(kata_id: str) -> tuple[int, int, float, str]:
    from grader.performance.model import observe
    from harness.frontends import nvrtc

    folder = ROOT / "solutions" / kata_id
    compiled = nvrtc.compile((folder / "kernel.cu").read_text(), "kernel.cu", cubin=True)
    spec = importlib.util.spec_from_file_location(f"plan_{kata_id.replace('-', '_')}", folder / "launch.py")
    plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plan)
    from harness.backends.cpu import CpuBackend

    real, counts = CpuBackend.launch, [0, 0]

    def counted(self, *args, **kwargs):
        before = (self.issued, self.work)
        real(self, *args, **kwargs)
        counts[0] += self.issued - before[0]
        counts[1] += self.work - before[1]

    CpuBackend.launch = counted
    try:
        started = time.process_time()
        obs = observe.observe_in_worker(plan.launch, str(folder / "launch.py"), kata_id, compiled.ptx, "kernel.cu", 0,
                                        registers={k: r.registers for k, r in compiled.resources.items()})
        cpu = time.process_time() - started
    finally:
        CpuBackend.launch = real
    return counts[0], counts[1], cpu, ", ".join(sorted({o.method for o in obs}))


def main() -> None:
    from grader import catalog

    katas = sys.argv[1:] or catalog.ids()
    print("| kata | emulated work | instruction issues | CPU s (this machine) | made |")
    print("|---|---|---|---|---|")
    for k in katas:
        try:
            n, work, cpu, how = cost(k)
            print(f"| {k} | {work:,} | {n:,} | {cpu:.1f} | {how} |", flush=True)
        except Exception as exc:  # recorded; the others go on
            print(f"| {k} | - | - | - | {type(exc).__name__}: {str(exc)[:60]} |", flush=True)


if __name__ == "__main__":
    main()

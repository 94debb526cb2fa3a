"""What the schedule-bug checks add to each solution's CPU grade, as counted CPU time: the runs a
grade makes for them, timed in this process (time.process_time, which a shared machine disturbs
far less than wall time), beside the grade's own CPU seconds from lab/results/grade-times.md.

    python lab/races_cost.py [KATA ...] [--repeat 3] [--write lab/results/races-cost.md]

Per kata, on the sanitizer's case (the largest public case up to sanitizer.SANITIZE_ELEMENTS elements):
the sanitizer + counters run with the global-race shadow and with it switched off (its cost is the
difference), and the order check's two runs under other schedules, which a grade makes only when
the kernel's PTX has an atomic. Each time is the least of --repeat runs.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _grade_cpu() -> dict:
    """The warm CPU seconds of each solution's grade (lab/results/grade-times.md)."""
    out = {}
    for line in (ROOT / "lab" / "results" / "grade-times.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 9 and cells[2] == f"solutions/{cells[1]}":
            out[cells[1]] = float(cells[8])
    return out


def measure(kata_id: str, repeat: int) -> dict:
    from grader import catalog
    from grader.grading import cases, runs
    from grader.pipeline import compile as compile_stage, sanitizer
    from grader.grading.workspace import locate
    from harness.emulator import global_shadow
    from harness.sandbox import worker
    from harness.sandbox.isolation import ArgValue, Program, RunSpec
    from harness.sandbox.plan_host import PlanHost

    kata = catalog.load(kata_id)
    sub = locate(ROOT / "solutions" / kata_id, kata_id)
    raw, launch_text = sub.kernel.read_bytes(), sub.launch.read_text()
    compiled, stage = compile_stage._compile(sub, raw, launch_text)
    assert stage.ok, stage.headline()
    py = str(sub.kernel.resolve()) if sub.kernel.suffix == ".py" else ""
    program = Program("cpu", compiled.ptx, compiled.cubin, sub.kernel.name, str(sub.launch.resolve()),
                      launch_source=launch_text, kernel_source=raw.decode("utf-8", "replace"), kernel_path=py)
    host = PlanHost(program.launch_path, source=launch_text, kernel_source=program.kernel_source,
                    sandbox={"required": False})
    assert host.start() is None
    datas = [cases.materialize(kata, cases.Case(dict(p), "public", cases.DEFAULT_SEED)) for p in kata.public]
    fits = [d for d in datas if d.elements <= sanitizer.SANITIZE_ELEMENTS] or [min(datas, key=lambda d: d.elements)]
    data = max(fits, key=lambda d: d.elements)
    args = []
    for arg in kata.args:
        if arg.role == "scalar":
            args.append(ArgValue(arg.name, "scalar", data.scalars[arg.name]))
        elif arg.role == "out":
            args.append(ArgValue(arg.name, "out", None, arg.dtype.str, int(data.expected[arg.name].size)))
        else:
            args.append(ArgValue(arg.name, arg.role, data.inputs[arg.name]))

    def cpu(spec: RunSpec) -> float:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.process_time()
            result = worker._run(program, host, spec)
            best = min(best, time.process_time() - t0)
            assert result.problem is None, result.problem
        return best

    worker._run(program, host, RunSpec(tuple(args), sanitize=True, counters=True))  # imports, numba's first call
    on = cpu(RunSpec(tuple(args), sanitize=True, counters=True))
    access, fence = global_shadow.GlobalRaces.access, global_shadow.GlobalRaces.fence
    global_shadow.GlobalRaces.access = global_shadow.GlobalRaces.fence = lambda *a, **k: None
    try:
        off = cpu(RunSpec(tuple(args), sanitize=True, counters=True))
    finally:
        global_shadow.GlobalRaces.access, global_shadow.GlobalRaces.fence = access, fence
    atomics = sanitizer.has_atomics(compiled.ptx)
    order, verdicts = 0.0, []
    for s in sanitizer.schedules_for(cases.DEFAULT_SEED) if atomics else ():
        order += cpu(RunSpec(tuple(args), schedule=s))
        result = worker._run(program, host, RunSpec(tuple(args), schedule=s))  # the solution must pass
        check = runs.compare(kata, data.inputs, result.outputs, data.expected, {**data.case.params, **data.scalars},
                             result.changed_inputs)
        verdicts.append("pass" if check.ok else f"FAIL {check.headline()}")
    host.close()
    return {"case": data.case.label(), "sanitizer_on": on, "sanitizer_off": off, "atomics": atomics, "order": order,
            "verdicts": verdicts}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("katas", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write", type=Path)
    a = ap.parse_args()
    grades = _grade_cpu()
    katas = a.katas or sorted(grades)
    rows = []
    for kata in katas:
        m = measure(kata, a.repeat)
        added = max(0.0, m["sanitizer_on"] - m["sanitizer_off"]) + m["order"]
        share = 100 * added / grades[kata] if kata in grades else float("nan")
        rows.append(f"| {kata} | {m['case']} | {m['sanitizer_off']:.3f} | {m['sanitizer_on']:.3f} | "
                    f"{'yes' if m['atomics'] else 'no'} | {m['order']:.3f} | {grades.get(kata, float('nan')):.1f} | "
                    f"{share:.1f} % | {', '.join(m['verdicts']) or '-'} |")
        print(rows[-1], flush=True)
    if a.write:
        head = ["# What the schedule-bug checks cost each solution's CPU grade", "",
                f"- command: `python lab/races_cost.py --repeat {a.repeat} --write {a.write}`",
                f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
                ("- CPU seconds of this process (time.process_time, the least of the repeats) on a shared "
                 "2-core machine; the grade's CPU seconds are the warm column of lab/results/grade-times.md "
                 "(an earlier, quieter day)"), "",
                ("| kata | sanitizer case | sanitizer run, no global shadow s | with it s | atomics in the PTX | "
                 "order check (2 runs) s | grade CPU s | added | the solution under the 2 schedules |"),
                "|---|---|---|---|---|---|---|---|---|"]
        a.write.write_text("\n".join(head + rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

import contextlib, sys, time
mode, kid = sys.argv[1], sys.argv[2]
from harness import timing
if mode.endswith("gc_on"):
    timing.gc_paused = contextlib.nullcontext
if mode.startswith("torch"):
    t = time.perf_counter(); import torch; torch.cuda.init(); print("torch import", round(time.perf_counter() - t, 2))
from grader import catalog
from grader.bench import load_submission
from grader.perf import performance_stage
kata = catalog.load(kid)
compiled, launch, lp = load_submission(kata.solution_dir, kid)
for rep in range(2):
    r = performance_stage(kata, compiled, launch, launch_file=lp, with_baseline=False)
    for c in r.cases:
        k = c.kernel
        s = sorted(k.samples)
        print(mode, kid, rep, c.case, k.stop, k.stats.n, round(k.wall_s, 3), f"rse {k.stats.rse:.4%}",
              f"max/median {s[-1] / k.stats.median:.2f}", f"issue {k.issue_s*1e3:.3f} ms", k.flags[:1])
    print(mode, kid, rep, {a: round(b, 3) for a, b in r.phases.items()})

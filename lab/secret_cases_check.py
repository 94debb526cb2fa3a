"""Every kata's solution graded on the hidden cases a `kata serve` server would draw from a secret seed
(grader/grading/secret_cases.py): a correct kernel must pass them, or the draw made a case the kata
does not promise to handle. CPU backend (the emulator), public cases first, no drawn examples.

    python lab/secret_cases_check.py [--seed S] [--json OUT] [KATA ...]
"""
from __future__ import annotations

import argparse
import json
import time


def main() -> int:
    from grader import catalog, pipeline
    from grader.grading import secret_cases

    parser = argparse.ArgumentParser()
    parser.add_argument("katas", nargs="*")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    for kata_id in args.katas or catalog.builtin_ids():
        kata = catalog.load(kata_id)
        drawn = secret_cases.draw(kata, args.seed)
        started = time.time()
        report = pipeline.grade(kata_id, kata.solution_dir, backend=args.backend, examples=0, seed=args.seed,
                                hidden_cases=drawn, with_estimate=False)
        row = {"kata": kata_id, "verdict": report.verdict, "headline": report.headline, "cases": list(drawn),
               "seconds": round(time.time() - started, 1)}
        rows.append(row)
        print(f"{kata_id:<20} {report.verdict:<5} {row['seconds']:>6} s  {report.headline[:90]}", flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"seed": args.seed, "backend": args.backend, "rows": rows}, out, indent=1)
    return 0 if all(r["verdict"] == "pass" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""The CPU estimate against the H200 on the validation corpus: issue 23's goals, measured.

    python lab/validation/validate.py [--h200 lab/validation/h200/DATE/records.json] [--determinism KATA/DESIGN]
                                      [--out lab/validation/results] [--only KATA ...]

For every corpus kernel it takes the model's estimate from a CPU grade (`python -m grader grade DIR
--kata KATA --backend cpu --json`, cached by lab/validation/corpus.py under the kernel's and the
model's files, so a new model grades again) and the H200 time recorded by measure_h200.py at each
bench case, and writes OUT.md and OUT.json:

- ratio estimate / measured per (kernel, case); the share within 1.5x; whether all are within 3x;
- Spearman rank correlation of estimate and measurement among each kata's kernels, per bench case;
- estimates faster than the roofline time of the case's bytes and FLOPs (a model defect);
- scores or tiers given although the model run did not finish (its "how" says a lower bound);
- cases with no estimate; error per bound class (the resource the model names);
- determinism: one kernel graded twice, once as the machine is, once with two busy processes added,
  its estimates compared to 3 significant digits.
Only kernels whose grade passes count; the others are listed.
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from corpus import DEFAULT_CACHE, corpus, grade, model_digest

UNFINISHED = ("stopped before it finished", "lower bound", "at least")


def _key(case: dict) -> str:
    return json.dumps(case, sort_keys=True)


def all_records() -> list[Path]:
    """Every H200 run's records.json, oldest first (a later run's time replaces an earlier one's)."""
    return sorted((HERE / "h200").glob("*/records.json"))


def measured(paths: list[Path]) -> tuple[dict, dict]:
    """({(kata, design, case key): record}, the runs' headers) of the H200 records that have a time;
    a later file's record replaces an earlier one's (a re-timed kernel)."""
    out, headers = {}, []
    for path in paths:
        doc = json.loads(path.read_text())
        name = path.resolve().relative_to(ROOT) if path.resolve().is_relative_to(ROOT) else path
        headers.append({k: doc.get(k) for k in ("gpu", "date", "method", "wall_s")} | {"file": str(name)})
        for r in doc.get("records", []):
            key = (r["kata"], r["design"], _key(r["case"]))
            if r.get("median_s") and "error" not in r:
                out[key] = r
    return out, {"runs": headers, "gpu": headers[-1]["gpu"] if headers else None,
                 "method": headers[-1]["method"] if headers else None}


def unfinished(how: str | None) -> bool:
    return any(s in (how or "") for s in UNFINISHED)


def rows_for(entries, h200: dict, cache: Path, model: str, fresh: bool = False) -> tuple[list[dict], list[dict]]:
    """(one row per (kernel, case) with a measurement, one row per kernel that did not pass)."""
    rows, failed = [], []
    for kata, design, folder in entries:
        doc = grade(kata, folder, cache, model, fresh=fresh)
        if doc.get("verdict") != "pass":
            failed.append({"kata": kata, "design": design, "verdict": doc.get("verdict"),
                           "headline": str(doc.get("headline", ""))[:200]})
            continue
        est = doc.get("estimate") or {}
        tier = est.get("tier")
        by_case = {_key(c.get("case", {})): c for c in est.get("cases") or []}
        for (k, d, case), rec in sorted(h200.items()):
            if (k, d) != (kata, design):
                continue
            c = by_case.get(case, {})  # {}: the grade gave no estimate for this bench case
            seconds = c.get("seconds") or None
            roof = rec.get("roofline_s") or c.get("roofline_s")
            rows.append({
                "kata": kata, "design": design, "case": rec["case"], "measured_s": rec["median_s"],
                "samples": rec.get("n"), "estimate_s": seconds, "ratio": seconds / rec["median_s"] if seconds else None,
                "bound": c.get("resource") or "none", "bound_text": c.get("bound"), "how": c.get("how"),
                "roofline_s": roof, "below_roofline": bool(seconds and roof and seconds < 0.999 * roof),
                "unfinished": unfinished(c.get("how")),
                "scored": c.get("score") is not None or (tier not in (None, "", "none")),
                "agrees_with_solution": rec.get("agrees_with_solution", True),
            })
    return rows, failed


def spearman_per_case(rows: list[dict]) -> list[dict]:
    from scipy.stats import spearmanr

    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["ratio"] is not None:
            groups.setdefault((r["kata"], _key(r["case"])), []).append(r)
    out = []
    for (kata, case), rs in sorted(groups.items()):
        if len(rs) < 3:
            continue
        rho = spearmanr([r["estimate_s"] for r in rs], [r["measured_s"] for r in rs]).statistic
        out.append({"kata": kata, "case": case, "kernels": len(rs), "rho": None if math.isnan(rho) else float(rho)})
    return out


def ordered_pairs(rows: list[dict]) -> dict:
    """Pairs of one kata's kernels at one case whose H200 times differ by more than 25 %: how many the
    estimate puts in the same order (the issue's ladder goal, over the whole corpus)."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["ratio"] is not None:
            groups.setdefault((r["kata"], _key(r["case"])), []).append(r)
    pairs, wrong = 0, []
    for rs in groups.values():
        for i, a in enumerate(rs):
            for b in rs[i + 1:]:
                fast, slow = sorted((a, b), key=lambda r: r["measured_s"])
                if slow["measured_s"] > 1.25 * fast["measured_s"]:
                    pairs += 1
                    if not fast["estimate_s"] < slow["estimate_s"]:
                        wrong.append(f"{a['kata']}: {fast['design']} vs {slow['design']}")
    return {"pairs": pairs, "right": pairs - len(wrong), "misordered": wrong}


def per_bound(rows: list[dict]) -> list[dict]:
    groups: dict[str, list[float]] = {}
    for r in rows:
        if r["ratio"]:
            groups.setdefault(r["bound"], []).append(r["ratio"])
    out = []
    for bound, ratios in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        logs = sorted(abs(math.log(x)) for x in ratios)
        out.append({"bound": bound, "cases": len(ratios),
                    "within_1_5": sum(x <= math.log(1.5) for x in logs) / len(logs),
                    "median_error": math.exp(logs[len(logs) // 2]), "worst_error": math.exp(logs[-1]),
                    "too_fast": sum(x < 1 / 1.5 for x in ratios), "too_slow": sum(x > 1.5 for x in ratios)})
    return out


def goals(rows: list[dict], failed: list[dict]) -> dict:
    with_est = [r for r in rows if r["ratio"]]
    within = [r for r in with_est if 1 / 1.5 <= r["ratio"] <= 1.5]
    within3 = [r for r in with_est if 1 / 3 <= r["ratio"] <= 3]
    rhos = spearman_per_case(rows)
    return {
        "cases": len(rows), "kernels": len({(r["kata"], r["design"]) for r in rows}),
        "katas": len({r["kata"] for r in rows}), "not_passing": len(failed),
        "no_estimate": len(rows) - len(with_est),
        "within_1_5": len(within) / len(rows) if rows else None,
        "within_3": len(within3) / len(rows) if rows else None,
        "all_within_3": len(within3) == len(rows),
        "worst_too_fast": min((r["ratio"] for r in with_est), default=None),
        "worst_too_slow": max((r["ratio"] for r in with_est), default=None),
        "spearman_min": min((x["rho"] for x in rhos if x["rho"] is not None), default=None),
        "spearman_at_least_0_9": sum(1 for x in rhos if x["rho"] is not None and x["rho"] >= 0.9),
        "spearman_groups": len(rhos),
        "below_roofline": sum(r["below_roofline"] for r in rows),
        "scored_unfinished": sum(r["unfinished"] and r["scored"] for r in rows),
        "unfinished": sum(r["unfinished"] for r in rows),
        "spearman": rhos, "per_bound": per_bound(rows), "pairs": ordered_pairs(rows),
    }


def _busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 1


def determinism(target: str, cache: Path) -> dict:
    """Grade kata/design twice (no cache): on the machine as it is (on a shared machine, other users'
    load), then with two more busy processes (both cores busy); the estimates compared to 3 digits."""
    kata, design = target.split("/", 1)
    folder = HERE / kata / design
    out = {"kernel": target, "runs": []}
    for label in ("as is", "plus two busy processes"):
        hogs = []
        if label != "as is":
            hogs = [multiprocessing.Process(target=_busy, args=(900.0,)) for _ in range(2)]
            for h in hogs:
                h.start()
        try:
            doc = grade(kata, folder, cache / "determinism" / label.replace(" ", "_") / str(time.time_ns()), "fresh")
        finally:
            for h in hogs:
                h.terminate()
        cases = (doc.get("estimate") or {}).get("cases") or []
        out["runs"].append({"load": label, "grade_wall_s": doc.get("grade_wall_s"),
                            "seconds": [c.get("seconds") for c in cases]})
    a, b = (r["seconds"] for r in out["runs"])
    out["same_to_3_digits"] = len(a) == len(b) and all(
        (x is None and y is None) or (x and y and f"{x:.3g}" == f"{y:.3g}") for x, y in zip(a, b, strict=True))
    return out


def _fmt_s(s) -> str:
    if not s:
        return "—"
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"


def _case_text(case: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in (case or {}).items())


def _times(ratio, invert: bool = False) -> str:
    if not ratio:
        return "—"
    return f"{(1 / ratio if invert else ratio):.3g}x"


def _fmt_rho(rho) -> str:
    return "—" if rho is None else f"{rho:.2f}"


def markdown(g: dict, rows: list[dict], failed: list[dict], header: dict, det: dict | None, command: str,
             model: str) -> str:
    pct = lambda x: "—" if x is None else f"{x:.0%}"
    lines = [
        "# The CPU estimate against the H200 on the validation corpus (issue 23)", "",
        f"- command: `{command}`",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; model files digest {model}",
        f"- H200 records: {header.get('gpu')}; {header.get('method')}; runs: "
        + ", ".join(f"{r['file']} ({r['date']})" for r in header.get("runs", [])),
        ("- estimates: `python -m grader grade DIR --kata KATA --backend cpu --json` on a shared 2-core machine "
        "(grade wall times are noisy; the estimates are not wall-clock based where the model counts work)"), "",
        "## Goals", "",
        "| goal | target | now |", "|---|---|---|",
        (f"| cases within 1.5x of the H200 | >= 90 % | {pct(g['within_1_5'])} of {g['cases']} cases "
        f"({g['kernels']} kernels, {g['katas']} katas) |"),
        (f"| all within 3x | yes | {'yes' if g['all_within_3'] else 'no'} ({pct(g['within_3'])}; worst "
        f"{_times(g['worst_too_fast'], invert=True)} too fast, {_times(g['worst_too_slow'])} too slow) |"),
        (f"| Spearman per kata and case | >= 0.9 | {g['spearman_at_least_0_9']} of {g['spearman_groups']} groups; "
        f"lowest {g['spearman_min'] if g['spearman_min'] is None else round(g['spearman_min'], 2)} |"),
        (f"| pairs > 25 % apart on the H200 in the same order | >= 95 % | {g['pairs']['right']} of "
        f"{g['pairs']['pairs']} |"),
        f"| estimates faster than the roofline | 0 | {g['below_roofline']} |",
        f"| scores or tiers from unfinished runs | 0 | {g['scored_unfinished']} (of {g['unfinished']} unfinished) |",
        f"| cases with no estimate | 0 | {g['no_estimate']} |",
    ]
    if det:
        same = "yes" if det["same_to_3_digits"] else "no"
        runs = "; ".join(f"{r['load']}: {', '.join(_fmt_s(s) for s in r['seconds'])} ({r['grade_wall_s']} s)"
                         for r in det["runs"])
        lines.append(f"| same estimate to 3 digits, graded as is and with both cores busy ({det['kernel']}) | yes | "
                     f"{same}: {runs} |")
    worst = sorted((r for r in rows if r["ratio"]), key=lambda r: -abs(math.log(r["ratio"])))[:12]
    lines += ["", "## The worst estimates", "", "| kata | design | case | H200 | estimate | est/H200 | bound |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['kata']} | {r['design']} | {_case_text(r['case'])} | {_fmt_s(r['measured_s'])} | "
              f"{_fmt_s(r['estimate_s'])} | {r['ratio']:.3g} | {r['bound_text'] or r['bound']} |" for r in worst]
    lines += ["", "## Error per bound class (the resource the model names)", "",
              "| bound | cases | within 1.5x | median error | worst error | >1.5x too fast | >1.5x too slow |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {b['bound']} | {b['cases']} | {b['within_1_5']:.0%} | {b['median_error']:.2f}x | "
              f"{b['worst_error']:.3g}x | {b['too_fast']} | {b['too_slow']} |" for b in g["per_bound"]]
    lines += ["", "## Spearman per kata and bench case", "", "| kata | case | kernels | rho |", "|---|---|---|---|"]
    lines += [f"| {x['kata']} | {_case_text(json.loads(x['case']))} | {x['kernels']} | {_fmt_rho(x['rho'])} |"
              for x in g["spearman"]]
    lines += ["", "## Every case", "",
              "| kata | design | case | H200 | estimate | est/H200 | bound | roofline | unfinished | flags |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["kata"], r["design"], _key(r["case"]))):
        flags = []
        if r["below_roofline"]:
            flags.append("below roofline")
        if r["unfinished"] and r["scored"]:
            flags.append("scored though unfinished")
        if not r["agrees_with_solution"]:
            flags.append("H200 output differs from the solution's")
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(f"| {r['kata']} | {r['design']} | {_case_text(r['case'])} | {_fmt_s(r['measured_s'])} | "
                     f"{_fmt_s(r['estimate_s'])} | {ratio} | {r['bound']} | {_fmt_s(r['roofline_s'])} | "
                     f"{'yes' if r['unfinished'] else ''} | {', '.join(flags)} |")
    if failed:
        lines += ["", "## Kernels whose grade did not pass (left out)", ""]
        lines += [f"- {f['kata']}/{f['design']}: {f['verdict']}: {f['headline']}" for f in failed]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--h200", type=Path, nargs="*", default=None,
                    help="measure_h200.py's records.json files, oldest first (default: every lab/validation/h200/*/)")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--fresh", action="store_true", help="grade every kernel again (the cache follows only the model's files)")
    ap.add_argument("--determinism", default="reduce/one_block_shared_tree", help="kata/design graded twice; '' to skip")
    args = ap.parse_args(argv)
    paths = args.h200 or all_records()
    if not paths:
        print("no H200 records: run lab/validation/measure_h200.py on the GPU first", file=sys.stderr)
        return 2
    h200, header = measured(paths)
    model = model_digest()
    rows, failed = rows_for(corpus(args.only), h200, args.cache, model, args.fresh)
    g = goals(rows, failed)
    det = determinism(args.determinism, args.cache) if args.determinism else None
    command = "python lab/validation/validate.py " + " ".join(sys.argv[1:] if argv is None else argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text(markdown(g, rows, failed, header, det, command.strip(), model))
    args.out.with_suffix(".json").write_text(json.dumps({"h200": header, "records": [r["file"] for r in header["runs"]], "model": model,
                                                         "goals": g, "determinism": det, "rows": rows,
                                                         "not_passing": failed}, indent=1, default=str))
    print(f"{g['cases']} cases: within 1.5x {g['within_1_5'] or 0:.0%}, all within 3x: {g['all_within_3']}, "
          f"below roofline {g['below_roofline']}, scored unfinished {g['scored_unfinished']}, "
          f"no estimate {g['no_estimate']}; wrote {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

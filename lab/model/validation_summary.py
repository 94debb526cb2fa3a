"""Issue 23's goals over validate_model.py's estimates (estimate only, no grade), one model against
another: the share of cases within 1.5x and 3x of the H200, Spearman per kata and case, ladder
pairs in order, unfinished runs, model defects, and every case whose ratio moved.

    python lab/model/validation_summary.py AFTER.json [--before BEFORE.json] [--out OUT.md]

Ratios are estimate / H200 (below 1: the estimate is too fast). The goals count finished estimates
(as the validation table does); unfinished runs ("at least X", no score) are counted apart. Cases
without an H200 time (held-out kernels awaiting a device run) are listed apart, with their estimates.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "lab" / "validation"))


def rows(path: Path) -> tuple[list[dict], list[dict]]:
    """(rows in validate.py's form, rows without an H200 time)."""
    out, pending = [], []
    for r in json.loads(path.read_text())["rows"]:
        if "error" in r:
            continue
        est = r.get("estimate_s")
        if not r.get("h200_s"):
            pending.append(r)
            continue
        unfinished = r.get("method") == "incomplete"
        out.append({"kata": r["kata"], "design": r["design"], "case": r["case"], "measured_s": r["h200_s"],
                    "estimate_s": est, "ratio": est / r["h200_s"] if est else None, "bound": r.get("class", ""),
                    "below_roofline": 0, "unfinished": unfinished, "scored": r.get("score") is not None and unfinished,
                    "defect": bool(r.get("defect")), "wall": r.get("model_wall_s")})
    return out, pending


def summary(path: Path) -> dict:
    from validate import goals

    every, pending = rows(path)
    rs = [r for r in every if not r["unfinished"]]  # as the validation table: finished estimates only
    g = goals(rs, [])
    g["unfinished"] = sum(r["unfinished"] for r in every)
    g["scored_unfinished"] = sum(r["scored"] for r in every)
    g["defects"] = sum(r["defect"] for r in rs)
    walls = {(r["kata"], r["design"]): r["wall"] for r in rs if r["wall"] is not None}
    g["model_wall_over_3s"] = sorted(f"{k}/{d} {w:.0f} s" for (k, d), w in walls.items() if w > 3)
    return {"goals": g, "rows": every, "pending": pending}


def _line(g: dict) -> str:
    p = g["pairs"]
    return (f"{g['within_1_5']:.0%} within 1.5x, {g['within_3']:.0%} within 3x of {g['cases']} cases; "
            f"Spearman >= 0.9 in {g['spearman_at_least_0_9']}/{g['spearman_groups']} groups; pairs in order "
            f"{p['right']}/{p['pairs']} ({p['right'] / max(1, p['pairs']):.0%}); unfinished {g['unfinished']} "
            f"(scored {g['scored_unfinished']}); model defects at the floor {g['defects']}")


def markdown(after: dict, before: dict | None, command: str) -> str:
    out = ["# The H200 model on the validation corpus (issue 23)", "", f"`{command}`", "",
           "Ratio = estimate / H200 (below 1: too fast). Timings of the model run are wall seconds on a "
           "shared, loaded 2-core machine (noisy); the estimates themselves are deterministic.", ""]
    if before:
        out += [f"- before: {_line(before['goals'])}"]
    out += [f"- after: {_line(after['goals'])}", ""]
    out += ["Model runs over 3 s (wall, loaded machine): " + (", ".join(after["goals"]["model_wall_over_3s"]) or "none"),
            ""]
    old = {(r["kata"], r["design"], json.dumps(r["case"], sort_keys=True)): r for r in (before or {}).get("rows", [])}
    out += ["| kata | design | case | H200 | estimate | est/H200 | before |", "|---|---|---|---|---|---|---|"]
    for r in sorted(after["rows"], key=lambda r: (r["kata"], r["design"])):
        b = old.get((r["kata"], r["design"], json.dumps(r["case"], sort_keys=True)))
        case = " ".join(f"{k}={v}" for k, v in r["case"].items())
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else "-"
        prev = f"{b['ratio']:.2f}" if b and b["ratio"] else "-"
        out.append(f"| {r['kata']} | {r['design']} | {case} | {r['measured_s'] * 1e3:.3f} ms | "
                   f"{(r['estimate_s'] or 0) * 1e3:.3f} ms | {ratio} | {prev} |")
    if after["pending"]:
        out += ["", "## Held-out kernels without an H200 time yet (estimates only)", "",
                "| kata | design | case | estimate | bound |", "|---|---|---|---|---|"]
        for r in after["pending"]:
            case = " ".join(f"{k}={v}" for k, v in r["case"].items())
            out.append(f"| {r['kata']} | {r['design']} | {case} | {r['estimate_s'] * 1e3:.3f} ms | {r['bound']} |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("after", type=Path)
    ap.add_argument("--before", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    after = summary(args.after)
    before = summary(args.before) if args.before else None
    if before:
        print("before:", _line(before["goals"]))
    print("after: ", _line(after["goals"]))
    if args.out:
        args.out.write_text(markdown(after, before, " ".join(["python lab/model/validation_summary.py"] + sys.argv[1:])))


if __name__ == "__main__":
    main()

"""Run the real-code corpus (tests/harness/emulator/corpus) and count its kernels by verdict: correct,
wrong (the numpy reference disagrees), unsupported (an instruction the emulator lacks) and
false-finding (right answer, but the sanitizer or engine reported something).

    python lab/corpus_counts.py                      # print the table
    python lab/corpus_counts.py --write lab/results/corpus.md
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "harness" / "emulator" / "corpus"
VERDICTS = ("correct", "wrong", "unsupported", "false-finding")


def _load():
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(CORPUS))
    import _corpus

    for path in sorted(CORPUS.glob("cases_*.py")):
        spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}", path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    return _corpus


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", type=Path, help="write the markdown here")
    args = ap.parse_args()
    corpus = _load()
    rows, counts = [], dict.fromkeys(VERDICTS, 0)
    start = time.perf_counter()
    for name in sorted(corpus.CASES):
        source, _, kernels = corpus.CASES[name]
        t = time.perf_counter()
        verdict, detail = corpus.outcome(name)
        counts[verdict] += kernels
        rows.append(f"| {name} | {source}.cu | {kernels} | {verdict} | {time.perf_counter() - t:.1f} | "
                    f"{detail[:160].replace('|', '/')} |")
    total = sum(counts.values())
    text = "\n".join([
        "# Real-code corpus on the emulator",
        "",
        "- command: `python lab/corpus_counts.py --write lab/results/corpus.md`",
        f"- date: {datetime.date.today().isoformat()}",
        f"- {total} kernels in {len(rows)} cases, sanitizer on, {time.perf_counter() - start:.0f} s in all",
        "",
        "| " + " | ".join(VERDICTS) + " |",
        "|" + "---|" * len(VERDICTS),
        "| " + " | ".join(str(counts[v]) for v in VERDICTS) + " |",
        "",
        "| case | file | kernels | verdict | seconds | detail |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
    ])
    print(text)
    if args.write:
        args.write.write_text(text)
    return 0 if counts["correct"] == total else 1


if __name__ == "__main__":
    raise SystemExit(main())

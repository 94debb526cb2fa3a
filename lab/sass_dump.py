"""SASS of a kernel folder without a GPU: NVRTC's cubin (sm_90) through nvdisasm, as an opcode
histogram and the order of the instructions that matter for a memory-bound loop.

    python lab/sass_dump.py DIR [--show 'LDG|HMMA|BAR|LDL|STL'] [--full]

Why: ptxas decides how many loads are in flight, not the source. The qgemv notes (lab/tc_notes.md)
read this to see whether a round's weight loads (LDG.E.EF.128) all precede its first HMMA.
nvdisasm comes from PATH or from the wheels that ship it (triton bundles one).
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def nvdisasm() -> str | None:
    found = shutil.which("nvdisasm")
    if found:
        return found
    for pkg, rel in (("triton", "backends/nvidia/bin/nvdisasm"), ("nvidia", "cu13/bin/nvdisasm")):
        spec = importlib.util.find_spec(pkg)
        for root in (spec.submodule_search_locations or []) if spec else []:
            if (Path(root) / rel).is_file():
                return str(Path(root) / rel)
    return None


def main() -> int:
    from harness.frontends import nvrtc

    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--show", default=r"LDG|HMMA|BAR|LDL|STL|LDS|STS")
    ap.add_argument("--full", action="store_true", help="print every instruction")
    args = ap.parse_args()
    tool = nvdisasm()
    if not tool:
        print("nvdisasm not found: put it on PATH or pip install triton", file=sys.stderr)
        return 2
    compiled = nvrtc.compile((Path(args.dir) / "kernel.cu").read_text(), "kernel.cu", cubin=True)
    if not compiled.ok:
        print(compiled.log, file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        cubin.write_bytes(compiled.cubin)
        text = subprocess.run([tool, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    lines = [re.sub(r"/\*[0-9a-f]+\*/|;.*", "", s).strip() for s in text.splitlines()]
    code = [s for s in lines if s and not s.startswith((".", "/", "}")) and not s.endswith(":")]
    ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", s).split(" ")[0].split(".")[0] for s in code)
    print(f"{args.dir}: {compiled.resources}")
    print("  " + ", ".join(f"{op} {n}" for op, n in ops.most_common(16)))
    pat = re.compile(args.show)
    for i, s in enumerate(code):
        if args.full or pat.search(s):
            print(f"  {i:5d}  {s}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

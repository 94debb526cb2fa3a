#!/usr/bin/env bash
# Issue 24 on the H200: what the sandbox costs a GPU grade, and whether the timing exploits stay shut.
# Run from the repo root with JOBOUT set; _base/ (optional, not in the repo) holds the tree before
# the sandbox for the comparison. Expected run time: ~100 s. Writes $JOBOUT/*.
set -uo pipefail
out=${JOBOUT:?set JOBOUT}
mkdir -p "$out"
source lab/device_env.sh
export KATA_HOME=$(mktemp -d)/kata-home PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv >"$out/nvidia-smi.txt" 2>&1
python3 -c "from harness.sandbox import os_sandbox; print(os_sandbox.probe())" >"$out/probe.txt" 2>&1

grade() {  # grade TREE LABEL: one GPU grade of the reduce solution, wall seconds and the JSON report
  local tree=$1 label=$2 t0 t1
  t0=$(date +%s.%N)
  (cd "$tree" && PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" timeout 45 python3 -m grader grade \
    solutions/reduce --kata reduce --backend gpu --json) >"$out/$label.json" 2>"$out/$label.err" || true
  t1=$(date +%s.%N)
  echo "$label $(python3 -c "print(round($t1 - $t0, 2))")" | tee -a "$out/walls.txt"
}
grade . new_cold          # calibrates and makes bench inputs (the rotation set too)
grade . new_warm1
[ -d _base ] && grade _base base_warm1
grade . new_warm2
[ -d _base ] && grade _base base_warm2

# The compile: NVRTC in the sandboxed child vs in-process, cold (no cache), three each
timeout 40 python3 - >"$out/compile_cost.txt" 2>&1 <<'PY' || true
import time
from harness.frontends import nvrtc
src = open("solutions/reduce/kernel.cu").read()
for label, fn in (("jailed", lambda: nvrtc.compile(src, "kernel.cu", cubin=True, use_cache=False, include_dir="solutions/reduce")),
                  ("in-process", lambda: nvrtc._run_nvrtc(src, "kernel.cu", list(nvrtc.BASE_OPTIONS) + [f"-I{d}" for d in nvrtc.include_dirs()] + ["--gpu-architecture=sm_90"], "cubin"))):
    times = []
    for _ in range(3):
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    print(label, [round(x, 3) for x in times])
PY
# The GPU's own isolation tests (timing exploits), bounded
timeout 30 python3 -m pytest -q -x tests/gpu/test_plan_isolation_gpu.py >"$out/gpu_isolation_tests.txt" 2>&1 || true
python3 - "$out" <<'PY' || true
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
for p in sorted(out.glob("*.json")):
    try:
        r = json.loads(p.read_text())
        perf = r.get("performance") or {}
        print(p.stem, r.get("verdict"), "perf wall", perf.get("wall_s"), "error", perf.get("error"))
    except Exception as exc:
        print(p.stem, "unreadable:", exc)
PY
cat "$out/walls.txt" "$out/compile_cost.txt"; tail -3 "$out/gpu_isolation_tests.txt"

#!/usr/bin/env bash
# One device call for grade latency: every kata's solution graded twice with `kata grade --backend gpu`
# (lab/gpu_suite.py --parts latency), first on a fresh machine (bench inputs made and cached by the
# grade, as a learner's first grade), then again with that cache warm (every later grade).
#   bash lab/gpu_latency.sh OUT_DIR [--katas ...]
# Writes OUT_DIR/{nvidia-smi.txt, cold.md, cold.json, warm.md, warm.json, warm.log}. Budgets in seconds:
# BUDGET_S for the cold pass (calibration included), WARM_BUDGET_S for the warm one.
set -uo pipefail
out=${1:?usage: gpu_latency.sh OUT_DIR [suite options]}
shift
mkdir -p "$out"
export KATA_HOME=${KATA_HOME:-$(mktemp -d)/kata-home} PYTHONUNBUFFERED=1
mkdir -p "$KATA_HOME/cache/bench"  # the suite's per-grade homes link to this cache
python3 -m pip install --no-deps --no-build-isolation -e . -q >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu \
  --format=csv >"$out/nvidia-smi.txt" 2>&1
for pass in cold warm; do
  parts=latency budget=${WARM_BUDGET_S:-${BUDGET_S:-250}}
  [ $pass = cold ] && parts=calibrate,latency budget=${BUDGET_S:-250}
  tmp=$(mktemp -d)
  python3 lab/gpu_suite.py "$tmp" --parts $parts --budget-s "$budget" "$@"
  cp "$tmp/results.md" "$out/$pass.md"; cp "$tmp/results.json" "$out/$pass.json"
  [ $pass = warm ] && cp "$tmp/suite.log" "$out/$pass.log"
done
tail -30 "$out/warm.md"

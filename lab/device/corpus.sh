#!/bin/bash
# Issue 23's validation corpus on the GPU (run from the repo root on the device; results under $JOBOUT).
# Expected: ~460 s (about 30 s of installs and start-up, the measurement capped at --budget-s 400, a
# 20 s margin for the kernel in flight when the budget runs out).
set -u
JOBOUT=${JOBOUT:-${OUT:-/tmp/corpus-out}}
mkdir -p "$JOBOUT/corpus"
. bench/device_env.sh  # wheels from .whl/, kata from the working tree
export KATA_HOME=/tmp/kata-home-corpus
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,memory.total --format=csv > "$JOBOUT/corpus/gpu.txt" 2>&1 || true
timeout 440 python3 lab/validation/measure_h200.py "$JOBOUT/corpus" --budget-s 400 --workers 10 \
  > "$JOBOUT/corpus/log.txt" 2>&1 || echo "measure_h200 exited with $?" >> "$JOBOUT/corpus/log.txt"
tail -5 "$JOBOUT/corpus/log.txt"
grep -c '"design"' "$JOBOUT/corpus/records.json" 2>/dev/null || true

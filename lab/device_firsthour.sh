#!/bin/bash
# Issue 28's device job (run from the repo root on the H200): per kata, the first GPU grade right
# after `kata start` (bench inputs made ahead, detached, from the start), the second, and the first
# once the inputs made ahead are ready, each on a fresh calibrated KATA_HOME, with the whole
# grade's steps and the performance stage's phases (lab/first_gpu_grade.py). Results under $JOBOUT.
#   bash lab/device_firsthour.sh        (about 300 s: setup 20, calibrate 10, ~35 s a kata, 7 katas)
#   KATAS="transpose scan" BUDGET=60 LIMIT=120 bash lab/device_firsthour.sh
#   COLD=1 ...: also a first grade without `kata start`, as runs 1-2 measured it (~8 s more a kata)
OUT=${JOBOUT:-${OUT:-firsthour-out}}
KATAS=${KATAS:-reduce layernorm qgemv paged-attention transpose softmax scan}
mkdir -p "$OUT"
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$OUT/smi.txt" 2>&1 || true
nproc > "$OUT/cores.txt" 2>&1 || true
cp COMMIT "$OUT/" 2>/dev/null || git rev-parse HEAD > "$OUT/COMMIT" 2>/dev/null || true
# shellcheck disable=SC2086  # KATAS is a list
timeout "${LIMIT:-300}" python3 lab/first_gpu_grade.py $KATAS \
  --out "$OUT" --budget "${BUDGET:-230}" --timeout 60 ${COLD:+--cold} > "$OUT/log.txt" 2>&1 || true
sed -n '/^| kata/,/^Device seconds/p' "$OUT/first-gpu-grade.md" 2>/dev/null || tail -20 "$OUT/log.txt"

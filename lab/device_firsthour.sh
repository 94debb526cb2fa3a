#!/bin/bash
# Issue 28's device job (run from the repo root on the H200): the first and second GPU grade of
# katas' solutions, each on a fresh calibrated KATA_HOME, with the whole grade's steps and the
# performance stage's phases (lab/first_gpu_grade.py). Results under $JOBOUT.
#   run 1: bash lab/device_firsthour.sh                      (about 170 s; reached 4 of its 7 katas)
#   run 2: KATAS="transpose scan" BUDGET=35 LIMIT=80 bash lab/device_firsthour.sh   (about 65 s)
OUT=${JOBOUT:-${OUT:-firsthour-out}}
KATAS=${KATAS:-reduce layernorm qgemv paged-attention transpose scan softmax}
mkdir -p "$OUT"
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$OUT/smi.txt" 2>&1 || true
nproc > "$OUT/cores.txt" 2>&1 || true
cp COMMIT "$OUT/" 2>/dev/null || true
# shellcheck disable=SC2086  # KATAS is a list
timeout "${LIMIT:-170}" python3 lab/first_gpu_grade.py $KATAS \
  --out "$OUT" --budget "${BUDGET:-115}" --timeout 60 > "$OUT/log.txt" 2>&1 || true
cat "$OUT/first-gpu-grade.md" 2>/dev/null || tail -20 "$OUT/log.txt"

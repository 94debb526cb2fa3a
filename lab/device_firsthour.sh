#!/bin/bash
# Issue 28's device job (run from the repo root on the H200; about 170 s): the first and second GPU
# grade of seven katas' solutions, each on a fresh calibrated KATA_HOME, with the whole grade's steps
# and the performance stage's phases (lab/first_gpu_grade.py). Results under $JOBOUT.
OUT=${JOBOUT:-${OUT:-/tmp/firsthour-out}}
mkdir -p "$OUT"
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$OUT/smi.txt" 2>&1 || true
nproc > "$OUT/cores.txt" 2>&1 || true
cp COMMIT "$OUT/" 2>/dev/null || true
timeout 170 python3 lab/first_gpu_grade.py reduce layernorm qgemv paged-attention transpose scan softmax \
  --out "$OUT" --budget 115 --timeout 60 > "$OUT/log.txt" 2>&1 || true
cat "$OUT/first-gpu-grade.md" 2>/dev/null || tail -20 "$OUT/log.txt"

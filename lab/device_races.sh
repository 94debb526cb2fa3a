#!/bin/bash
# The schedule-bug corpus on the device (from the repo root): each wrong kernel 20 times, each right
# twin 3 times, on the GPU (CuPy + numba.cuda). Expected run time: about 60 s (budget 150 s).
# Results under $JOBOUT (races_gpu.json, races_gpu.txt).
OUT=${JOBOUT:-${OUT:-/tmp/races_out}}
mkdir -p "$OUT"
nvidia-smi -L > "$OUT/gpu.txt" 2>&1 || true
timeout 140 python3 lab/races_gpu.py "$OUT" --runs 20 --right-runs 3 --budget-s 110 2>&1 | tee "$OUT/races_gpu.txt" || true

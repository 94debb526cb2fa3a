#!/bin/bash
# The Hopper zoo on the device (from the repo root): every case of tests/harness/emulator/zoo/cases_hopper.py
# on the emulator and on the GPU, outputs compared bit for bit (lab/tc_zoo_gpu.py --hopper).
# Results under $JOBOUT (or $OUT). Expected run time: about 120 s (most of it the emulator's side).
OUT=${JOBOUT:-${OUT:-/tmp/hopper-out}}
mkdir -p "$OUT"
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
export KATA_HOME=/tmp/kh-hopper
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu.txt" 2>&1 || true
timeout 200 python3 lab/tc_zoo_gpu.py --hopper > "$OUT/hopper_zoo.txt" 2>&1
echo "exit $?" >> "$OUT/hopper_zoo.txt"
timeout 60 python3 lab/hopper_plan_gpu.py > "$OUT/hopper_plan.txt" 2>&1 || true
cat "$OUT/gpu.txt" "$OUT/hopper_zoo.txt" "$OUT/hopper_plan.txt" | tail -50

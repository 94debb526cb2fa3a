#!/bin/bash
# The Hopper work on the device (from the repo root), in one call of about 240 s:
#   1. every case of tests/harness/emulator/zoo/cases_hopper.py on the emulator and on the GPU,
#      outputs compared bit for bit (lab/tc_zoo_gpu.py --hopper), and the launch plan's
#      gpu.tensor_map on the GPU (lab/hopper_plan_gpu.py);
#   2. at the same time, `kata dev check --backend gpu` of KATAS (default flash-prefill gelu-linear),
#      then `kata bench` of them (lab/gpu_katas.sh: the solution against its library baseline).
# ZOO=0 skips part 1.
# Results under $JOBOUT (or $OUT).
OUT=${JOBOUT:-${OUT:-$(mktemp -d)}}
mkdir -p "$OUT"
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
export KATA_HOME=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu.txt" 2>&1 || true
if [ "${ZOO:-1}" = 1 ]; then
  ( timeout 200 python3 lab/tc_zoo_gpu.py --hopper > "$OUT/hopper_zoo.txt" 2>&1
    echo "exit $?" >> "$OUT/hopper_zoo.txt"
    timeout 40 python3 lab/hopper_plan_gpu.py > "$OUT/hopper_plan.txt" 2>&1 || true ) &
fi
DEVCHECK_S=150 BENCH_S=80 timeout 235 bash lab/gpu_katas.sh "$OUT/k" "${KATAS:-flash-prefill gelu-linear}" \
  > "$OUT/katas.txt" 2>&1 || true
wait
cat "$OUT"/*.txt | tail -60

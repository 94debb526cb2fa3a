#!/usr/bin/env bash
# One device call that times the layernorm-backward and adamw candidates against their current
# solutions with lab/quick_time.py (kata bench's inputs, seed 0; one checked run each, then the
# grader's timing policy, then a bytewise look at the outputs after timing). One kata at a time,
# so no two timings share the GPU. Under 3 minutes on an H200, most of it making the bench inputs.
#   bash lab/variants/perf_a_time.sh [OUT_DIR]      (OUT_DIR gets perf_a_time.txt)
# Percentages use the calibration cache's bandwidth when there is one, else 4.4 TB/s: compare
# the candidates with the solution line of the same run, not with `kata bench`'s percentages.
# PERF_A_CPU=1: a dry run of the same command lines on the CPU emulator at small cases (checks
# only, no timing), to see on a machine without a GPU that the script and every folder work.
set -uo pipefail
out=${1:-}
scratch=$(mktemp -d)
export KATA_HOME=${KATA_HOME:-$scratch/kata-home}
export KATA_BENCH_CACHE_BYTES=$((48 << 30))
[ "${PERF_A_CPU:-0}" = 1 ] || python3 -m pip install --no-deps --no-build-isolation -e . -q >"$scratch/install.txt" 2>&1 || tail -5 "$scratch/install.txt"
v=lab/variants
lnb_extra=() adamw_extra=()
if [ "${PERF_A_CPU:-0}" = 1 ]; then
  lnb_extra=(--backend cpu --case '{"R": 64, "C": 2048, "dist": "shifted"}')
  adamw_extra=(--backend cpu --case '{"T": 50, "large": 3, "big": 33000, "t": 10}')
fi
{
  date -u +"%Y-%m-%d %H:%M UTC"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>/dev/null || echo "no nvidia-smi"
  echo "=== layernorm-backward"
  timeout 90 python3 lab/quick_time.py layernorm-backward solutions/layernorm-backward $v/layernorm-backward/l1_reread \
    $v/layernorm-backward/resident $v/layernorm-backward/pipelined4 "${lnb_extra[@]}"
  echo "exit $?"
  echo "=== adamw"
  timeout 150 python3 lab/quick_time.py adamw solutions/adamw $v/adamw/two_launch $v/adamw/one_launch_u2 "${adamw_extra[@]}"
  echo "exit $?"
} 2>&1 | tee "$scratch/perf_a_time.txt"
[ -n "$out" ] && mkdir -p "$out" && cp "$scratch/perf_a_time.txt" "$out/perf_a_time.txt"
exit 0

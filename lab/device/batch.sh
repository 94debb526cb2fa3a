#!/bin/bash
# One device call running several of lab's device jobs in turn, each under its own time limit, with
# their results packed into one archive ($OUT takes back at most 8 files):
#   bash lab/device/batch.sh gpu_tests:300 tails:190 hopper2:250 firsthour:290 jail:160
#   bash lab/device/batch.sh devcheck:250 gemm_bench:70 hopper_zoo:60 perf_tests:80 jail:150
# Each NAME:SECONDS runs the job below with JOBOUT=$W/NAME; $OUT/results.tgz holds every folder,
# $OUT/summary.txt each job's exit status and wall time.
set -u
OUT=${OUT:-/tmp/batch-out}
W=$(mktemp -d)
mkdir -p "$OUT"
. lab/device_env.sh
git rev-parse HEAD > "$W/COMMIT" 2>/dev/null || cp COMMIT "$W/" 2>/dev/null || true
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv > "$W/gpu.txt" 2>&1 || true
job() {  # name, JOBOUT
  case "$1" in
    gpu_tests)  # every gpu-marked test; a missing or broken GPU fails instead of skipping
      KATA_REQUIRE_GPU=1 KATA_HOME=$(mktemp -d) PYTHONUNBUFFERED=1 python3 -m pytest tests -m gpu \
        -rfE --tb=short --durations=30 -p no:cacheprovider --timeout 120 > "$2/gpu_tests.txt" 2>&1
      echo "pytest exit $?" >> "$2/gpu_tests.txt"; tail -25 "$2/gpu_tests.txt" ;;
    perf_tests)  # the performance stage's GPU tests alone
      KATA_REQUIRE_GPU=1 KATA_HOME=$(mktemp -d) python3 -m pytest tests/gpu/test_gpu_perf.py -m gpu -rfE \
        --tb=short -p no:cacheprovider > "$2/perf_tests.txt" 2>&1; echo "pytest exit $?" >> "$2/perf_tests.txt"
      tail -15 "$2/perf_tests.txt" ;;
    hopper_zoo)  # the wgmma zoo on the GPU and the emulator, bit for bit (the fp8 cut included)
      python3 lab/tc_zoo_gpu.py --hopper --only wgmma_tile > "$2/zoo.txt" 2>&1; echo "exit $?" >> "$2/zoo.txt"
      cat "$2/zoo.txt" ;;
    devcheck) JOBOUT=$2 ONLY=devcheck DEVCHECK_S=${DEVCHECK_S:-240} bash lab/device_hopper2.sh ;;
    gemm_bench) JOBOUT=$2 ONLY=bench bash lab/device_hopper2.sh ;;
    tails) JOBOUT=$2 bash lab/device/tails.sh ;;
    jail) JOBOUT=$2 bash lab/device/jail.sh ;;
    hopper29) JOBOUT=$2 bash lab/device/hopper29.sh ;;  # flash-prefill and fused-moe: variants, bench, dev check
    hopper2) JOBOUT=$2 bash lab/device_hopper2.sh ;;
    firsthour) JOBOUT=$2 LIMIT=${FIRSTHOUR_LIMIT:-280} BUDGET=${FIRSTHOUR_BUDGET:-220} \
      KATAS=${FIRSTHOUR_KATAS:-reduce layernorm qgemv paged-attention transpose scan} bash lab/device_firsthour.sh ;;
    *) echo "unknown job $1" ;;
  esac
}
for spec in "$@"; do
  name=${spec%%:*}; limit=${spec##*:}
  mkdir -p "$W/$name"
  t0=$(date +%s)
  echo "=== $name (limit $limit s)"
  timeout -k 5 "$limit" bash -c "$(declare -f job); job $name $W/$name" 2>&1 | tail -40
  rc=${PIPESTATUS[0]}
  echo "$name exit $rc in $(( $(date +%s) - t0 )) s" | tee -a "$W/summary.txt"
  tar czf "$OUT/results.tgz" -C "$W" . 2>/dev/null  # after each job: a later cut loses nothing
done
cp "$W/summary.txt" "$OUT/summary.txt"

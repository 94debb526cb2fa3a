#!/bin/bash
# Issue 29's last two katas on the device (from the repo root): flash-prefill's and fused-moe's
# solution and lab variants timed at the bench shapes (lab/quick_time.py), `kata bench` of both
# solutions against their libraries, and `kata dev check --backend gpu` of both, in parallel.
# Results under $JOBOUT (or $OUT): variants-flash.txt, variants-moe.txt, bench.txt, bench.md,
# devcheck.txt. ONLY=variants|bench|devcheck runs one part; QT_S, BENCH_S, DEVCHECK_S limit them.
OUT=${JOBOUT:-${OUT:-$(mktemp -d)}}
mkdir -p "$OUT"
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
export KATA_HOME=${KATA_HOME:-$(mktemp -d)}
export KATA_BENCH_CACHE_BYTES=$((48 << 30))
scratch=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1 || true
if [ -z "$ONLY" ] || [ "$ONLY" = variants ]; then
  for kata in flash-prefill fused-moe; do
    # shellcheck disable=SC2046  # the variant folders, each a DIR argument
    { date -u +"%Y-%m-%d %H:%M UTC"; echo "=== python3 lab/quick_time.py $kata solutions/$kata lab/variants/$kata/*/"
      timeout "${QT_S:-120}" python3 lab/quick_time.py "$kata" "solutions/$kata" $(ls -d lab/variants/"$kata"/*/) 2>&1 | tail -30
      echo "exit ${PIPESTATUS[0]}"; } > "$OUT/variants-${kata%%-*}.txt" 2>&1
    cat "$OUT/variants-${kata%%-*}.txt"
  done
fi
if [ -z "$ONLY" ] || [ "$ONLY" = bench ]; then
  { timeout "${BENCH_S:-120}" python3 -m grader bench flash-prefill fused-moe --out "$scratch/bench" 2>&1
    echo "kata bench: exit $?"; } > "$OUT/bench.txt"
  cp "$scratch/bench/bench.md" "$scratch/bench/bench.json" "$OUT/" 2>/dev/null
  tail -8 "$OUT/bench.txt"
fi
if [ -z "$ONLY" ] || [ "$ONLY" = devcheck ]; then
  for id in flash-prefill fused-moe; do
    ( { timeout "${DEVCHECK_S:-150}" python3 -m grader dev check "$id" --backend gpu 2>&1; echo "exit $?"; } \
        > "$scratch/dc_$id.txt" ) &
  done
  wait
  cat "$scratch"/dc_*.txt > "$OUT/devcheck.txt"
  grep -E "^(ok|FAIL|exit)" "$OUT/devcheck.txt" | tail -30
fi

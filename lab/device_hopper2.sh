#!/bin/bash
# The wgmma solutions of tc-gemm and fp8-gemm on the device (from the repo root), one call of about
# 200 s (at most ~250 s: each part has its timeout):
#   1. lab/quick_time.py tc-gemm at the bench shape (4096³) over variants made from the solution by
#      its #defines (tile BM × BN, stages, consumer warpgroups), the mma.sync solution it replaced
#      (lab/variants/tc-gemm/mma_sync), and a hedge with the B descriptor's LBO and SBO swapped
#      (WRONG on the GPU if the emulator reads MN-major descriptors right, as it does on the CPU);
#      each variant's checked run, median time and ptxas registers;
#   2. the same for fp8-gemm: the solution with 4 and 6 stages, and its mma.sync predecessor;
#   3. `kata bench tc-gemm fp8-gemm` (the solutions against their libraries, through the sandboxed
#      launch plan);
#   4. `kata dev check KATA --backend gpu` of both, in parallel;
#   5. lab/model/hopper/rates.py: the model's Hopper calibration kernels (sustained wgmma rate,
#      TMA bytes per second from DRAM and from L2).
# TC_VARIANTS="name:BN:STAGES:CONSUMERS ...", FP8_STAGES="4 6" override the lists; DEVCHECK_S (60) limits each dev check;
# ONLY=variants|bench|devcheck|rates runs one part. Results under $JOBOUT (or $OUT): variants.txt,
# bench.txt, bench.md, devcheck.txt, hopper_rates.txt/.json, gpu.txt.
# DRY=1 (no GPU): the variants' checks and the calibration kernels on the CPU emulator at a small
# shape, with $PYTHON.
OUT=${JOBOUT:-${OUT:-$(mktemp -d)}}
mkdir -p "$OUT"
qt_args=()
py=python3
if [ "${DRY:-0}" = 1 ]; then
  ONLY=dry
  qt_args=(--backend cpu --case '{"M": 200, "N": 264, "K": 256}')
  py=${PYTHON:-python3}
else
  . lab/device_env.sh  # wheels from .whl/, kata from the working tree
fi
export KATA_HOME=${KATA_HOME:-$(mktemp -d)}
export KATA_BENCH_CACHE_BYTES=$((48 << 30))
scratch=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1 || true

# A variant folder: a solution with #defines put first (its kernel.cu guards them with #ifndef)
# and launch.py's constants line rewritten to match.
variant() {  # kata name "defines" "launch.py constants line"
  local d="$scratch/v/$1/$2"
  mkdir -p "$d"
  { printf '%b' "$3"; cat "solutions/$1/kernel.cu"; } > "$d/kernel.cu"
  sed -E "s/^(BN, STAGES, CONSUMERS, BK|STAGES, BM, BN, BK) = .*/$4/" "solutions/$1/launch.py" > "$d/launch.py"
  echo "$d"
}

if [ -z "$ONLY" ] || [ "$ONLY" = variants ] || [ "$ONLY" = dry ]; then
  tc=""
  for spec in ${TC_VARIANTS:-t128x256_s4:256:4:2 t128x256_s3:256:3:2 t128x128_s6:128:6:2 t192x128_s4:128:4:3}; do
    IFS=: read -r name bn st cons <<< "$spec"
    tc="$tc $(variant tc-gemm "$name" "#define BN $bn\n#define STAGES $st\n#define CONSUMERS $cons\n" \
      "BN, STAGES, CONSUMERS, BK = $bn, $st, $cons, 64")"
  done
  swap="$scratch/v/tc-gemm/swap_lbo_sbo"
  mkdir -p "$swap" && cp solutions/tc-gemm/launch.py "$swap/"
  sed 's/desc(st + A_BYTES + ks \* 16 \* 128, BK \* 128, 1024)/desc(st + A_BYTES + ks * 16 * 128, 1024, BK * 128)/' \
    solutions/tc-gemm/kernel.cu > "$swap/kernel.cu"
  fp8=""
  for st in ${FP8_STAGES:-4 6}; do
    fp8="$fp8 $(variant fp8-gemm "s$st" "#define STAGES $st\n" "STAGES, BM, BN, BK = $st, 128, 128, 128")"
  done
  { date -u +"%Y-%m-%d %H:%M UTC"
    echo "=== python3 lab/quick_time.py tc-gemm <variants> lab/variants/tc-gemm/mma_sync <swap> (4096^3)"
    timeout 80 "$py" lab/quick_time.py tc-gemm $tc lab/variants/tc-gemm/mma_sync "$swap" "${qt_args[@]}" 2>&1 | tail -20
    echo "exit ${PIPESTATUS[0]}"
    echo "=== python3 lab/quick_time.py fp8-gemm <variants> lab/variants/fp8-gemm/mma_sync (4096^3)"
    timeout 45 "$py" lab/quick_time.py fp8-gemm $fp8 lab/variants/fp8-gemm/mma_sync "${qt_args[@]}" 2>&1 | tail -10
    echo "exit ${PIPESTATUS[0]}"; } > "$OUT/variants.txt" 2>&1
fi
if [ -z "$ONLY" ] || [ "$ONLY" = bench ]; then
  { timeout 55 python3 -m grader bench tc-gemm fp8-gemm --out "$scratch/bench" 2>&1; echo "kata bench: exit $?"; } > "$OUT/bench.txt"
  cp "$scratch/bench/bench.md" "$OUT/bench.md" 2>/dev/null
fi
if [ -z "$ONLY" ] || [ "$ONLY" = devcheck ]; then
  for id in tc-gemm fp8-gemm; do
    ( { timeout "${DEVCHECK_S:-60}" python3 -m grader dev check "$id" --backend gpu 2>&1; echo "exit $?"; } > "$scratch/dc_$id.txt" ) &
  done
  wait
  cat "$scratch"/dc_*.txt > "$OUT/devcheck.txt"
fi
if [ -z "$ONLY" ] || [ "$ONLY" = rates ] || [ "$ONLY" = dry ]; then
  if [ "$ONLY" = dry ]; then rates_args=(--backend cpu); else rates_args=(--out "$OUT/hopper_rates.json"); fi
  { timeout 30 "$py" lab/model/hopper/rates.py "${rates_args[@]}" 2>&1; echo "exit $?"; } > "$OUT/hopper_rates.txt"
fi
cat "$OUT/gpu.txt" "$OUT/variants.txt" "$OUT/hopper_rates.txt" 2>/dev/null; tail -8 "$OUT/bench.txt" 2>/dev/null; grep -E "checks passed|^FAIL|^exit" "$OUT/devcheck.txt" 2>/dev/null

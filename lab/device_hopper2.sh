#!/bin/bash
# The wgmma tc-gemm on the device (from the repo root), one call of about 200 s (at most 245 s: each part has its timeout):
#   1. lab/quick_time.py tc-gemm at the bench shape (4096³) over variants made from the solution by
#      its #defines (tile BM × BN, stages, consumer warpgroups), the mma.sync solution it replaced
#      (lab/variants/tc-gemm/mma_sync), and a hedge with the B descriptor's LBO and SBO swapped
#      (WRONG on the GPU if the emulator reads MN-major descriptors right, as it does on the CPU);
#      each variant's checked run, median time and ptxas registers;
#   2. `kata bench tc-gemm` (the solution against cuBLAS, through the sandboxed launch plan);
#   3. `kata dev check tc-gemm --backend gpu` (cases on the GPU, sanitizer and wrong kernels).
# VARIANTS="name:BN:STAGES:CONSUMERS ..." overrides the list; ONLY=variants|bench|devcheck runs one part.
# Results under $JOBOUT (or $OUT): variants.txt, bench.txt, bench.md, devcheck.txt, gpu.txt.
OUT=${JOBOUT:-${OUT:-$(mktemp -d)}}
mkdir -p "$OUT"
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
export KATA_HOME=${KATA_HOME:-$(mktemp -d)}
export KATA_BENCH_CACHE_BYTES=$((48 << 30))
scratch=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1 || true
timeout 25 python3 -m grader calibrate > "$OUT/calibrate.txt" 2>&1 || true

# A variant folder: the solution with its tile, stage and warpgroup #defines (and launch.py's) set.
variant() {  # name BN STAGES CONSUMERS
  local d="$scratch/v/$1"
  mkdir -p "$d"
  { echo "#define BN $2"; echo "#define STAGES $3"; echo "#define CONSUMERS $4"; cat solutions/tc-gemm/kernel.cu; } > "$d/kernel.cu"
  sed -E "s/^BN, STAGES, CONSUMERS, BK = .*/BN, STAGES, CONSUMERS, BK = $2, $3, $4, 64/" solutions/tc-gemm/launch.py > "$d/launch.py"
  echo "$d"
}

if [ -z "$ONLY" ] || [ "$ONLY" = variants ]; then
  dirs=""
  for spec in ${VARIANTS:-t128x256_s4:256:4:2 t128x256_s3:256:3:2 t128x128_s4:128:4:2 t128x128_s6:128:6:2 t192x128_s4:128:4:3}; do
    IFS=: read -r name bn st cons <<< "$spec"
    dirs="$dirs $(variant "$name" "$bn" "$st" "$cons")"
  done
  swap="$scratch/v/swap_lbo_sbo"
  mkdir -p "$swap" && cp solutions/tc-gemm/launch.py "$swap/"
  sed 's/desc(st + A_BYTES + ks \* 16 \* 128, BK \* 128, 1024)/desc(st + A_BYTES + ks * 16 * 128, 1024, BK * 128)/' \
    solutions/tc-gemm/kernel.cu > "$swap/kernel.cu"
  { date -u +"%Y-%m-%d %H:%M UTC"
    echo "=== python3 lab/quick_time.py tc-gemm <variants> lab/variants/tc-gemm/mma_sync (4096^3)"
    timeout 100 python3 lab/quick_time.py tc-gemm $dirs lab/variants/tc-gemm/mma_sync "$swap" 2>&1 | tail -30
    echo "exit $?"; } > "$OUT/variants.txt" 2>&1
fi
if [ -z "$ONLY" ] || [ "$ONLY" = bench ]; then
  { timeout 45 python3 -m grader bench tc-gemm --out "$scratch/bench" 2>&1; echo "kata bench: exit $?"; } > "$OUT/bench.txt"
  cp "$scratch/bench/bench.md" "$OUT/bench.md" 2>/dev/null
fi
if [ -z "$ONLY" ] || [ "$ONLY" = devcheck ]; then
  { timeout 75 python3 -m grader dev check tc-gemm --backend gpu 2>&1; echo "exit $?"; } > "$OUT/devcheck.txt"
fi
cat "$OUT/gpu.txt" "$OUT/variants.txt" 2>/dev/null; tail -5 "$OUT/bench.txt" "$OUT/devcheck.txt" 2>/dev/null

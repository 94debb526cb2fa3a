#!/usr/bin/env bash
# One device call for a set of katas: the GPU dev check of each (its solution's grade makes the
# kata's bench inputs, so the katas' inputs are made in parallel too) (cases on the GPU, the sanitizer on the emulator; in parallel), then
# `kata bench` of their solutions against their library baselines (one at a time, so no two
# timings share the GPU), then variant folders.
#   bash lab/gpu_katas.sh OUT_DIR ["KATA_IDS"] ["VARIANT_DIRS"]
# KATA_IDS defaults to the whole catalogue (BENCH_IDS, when set, are the katas benched instead);
# each VARIANT_DIR is lab/variants/<kata>/<name>.
# Writes at most 8 files into OUT_DIR (the device tool's limit), each as soon as its part is done.
set -uo pipefail
out=${1:?usage: gpu_training.sh OUT_DIR ["KATA_IDS"] ["VARIANT_DIRS"]}
ids=${2:-$(python3 -c "from grader import catalog; print(' '.join(catalog.ids()))")}
variants=${3:-}
mkdir -p "$out"
scratch=$(mktemp -d)  # logs and bench folders that are not results
export KATA_HOME=${KATA_HOME:-$scratch/kata-home}
# `python3 -m grader` rather than the `kata` script: pip may put the script beside another Python
kata() { python3 -m grader "$@"; }
python3 -m pip install --no-deps --no-build-isolation -e . -q >"$scratch/install.txt" 2>&1 || tail -5 "$scratch/install.txt"
log="$out/devcheck.txt"
{
  date -u +"%Y-%m-%d %H:%M UTC"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  python3 -c "import harness.frontends.nvrtc as c; print('NVRTC', c.nvrtc_version())"
} >"$log" 2>&1
kata calibrate >"$out/calibrate.txt" 2>&1
export KATA_BENCH_CACHE_BYTES=$((48 << 30))
t0=$(date +%s)
for id in $ids; do
  (timeout ${DEVCHECK_S:-300} python3 -m grader dev check "$id" --backend gpu >"$scratch/dc_$id.txt" 2>&1
   echo "exit $?" >>"$scratch/dc_$id.txt") &
done
wait
for id in $ids; do echo "=== kata dev check $id --backend gpu"; cat "$scratch/dc_$id.txt"; done >>"$log"
echo "dev check wall time: $(( $(date +%s) - t0 )) s" >>"$log"
grep -E "^=== |checks passed|^FAIL|^exit" "$log"
# Timings: the solutions with their baselines (bench inputs come from the cache the dev check filled).
timeout ${BENCH_S:-200} python3 -m grader bench ${BENCH_IDS:-$ids} --out "$scratch/bench" >"$out/bench.txt" 2>&1
echo "kata bench: exit $?" >>"$out/bench.txt"
cp "$scratch/bench/bench.md" "$out/bench.md" 2>/dev/null
cat "$out/bench.txt"
for v in $variants; do
  kata_id=$(basename "$(dirname "$v")")
  echo "=== python3 lab/quick_time.py $kata_id $v solutions/$kata_id"
  timeout 200 python3 lab/quick_time.py "$kata_id" "$v" "solutions/$kata_id" 2>&1 | tail -8
done >"$out/variants.txt" 2>&1
cat "$out/variants.txt"

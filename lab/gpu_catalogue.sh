#!/usr/bin/env bash
# One device call for the whole catalogue on a GPU: the GPU dev check (every solution passes on the
# GPU, every wrong kernel fails for its reason), a JSON grade of the reduce solution, optional
# variant folders timed beside their solutions, then lab/gpu_suite.py with the given options.
#   bash lab/gpu_catalogue.sh OUT_DIR "VARIANT_DIR ..." [gpu_suite.py options...]
# Writes at most 8 files into OUT_DIR (the device tool's limit).
set -uo pipefail
out=${1:?usage: gpu_catalogue.sh OUT_DIR "VARIANT_DIRS" [suite options]}
variants=${2:-}
shift 2 || shift $#
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
t0=$(date +%s)
# dev check per kata in parallel: the cases run on the GPU, the sanitizer on the emulator (CPU cores)
ids=$(python3 -c "from grader import catalog; print(' '.join(catalog.ids()))")
for id in $ids; do
  (kata dev check "$id" --backend gpu >"$scratch/dc_$id.txt" 2>&1; echo "exit $?" >>"$scratch/dc_$id.txt") &
done
wait
for id in $ids; do echo "=== kata dev check $id --backend gpu"; cat "$scratch/dc_$id.txt"; done >>"$log"
echo "dev check wall time: $(( $(date +%s) - t0 )) s" >>"$log"
grep -E "^=== |passed|failed|^exit" "$log" | tail -40
kata grade solutions/reduce --kata reduce --backend gpu --json >"$out/grade_reduce.json" 2>"$scratch/grade_err.txt"
echo "kata grade solutions/reduce --backend gpu --json: exit $?"
for v in $variants; do
  kata_id=$(basename "$(dirname "$v")")
  echo "=== kata bench $v --kata $kata_id"
  kata bench "$v" --kata "$kata_id" --out "$scratch/bench_$(basename "$v")" 2>&1 | tail -15
done >"$out/variants.txt" 2>&1
cat "$out/variants.txt"
python3 lab/gpu_suite.py "$out" "$@"
rm -f "$out/roofline.png.tmp"

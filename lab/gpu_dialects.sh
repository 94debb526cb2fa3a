#!/usr/bin/env bash
# The Triton and numba solutions timed on the GPU, one full `kata bench` grade each (correctness on
# the GPU, sanitizer on the emulator, then the timing against the kata's library), one at a time so
# no two timings share the GPU; the rows land in one table beside each other.
#   bash lab/gpu_dialects.sh OUT_FILE ["KATA/LANG ..." | "KATA=FOLDER ..."]
# KATA/LANG is solutions/KATA/LANG; KATA=FOLDER any folder with kernel.py and launch.py (a variant).
# Default: every solutions/<kata>/<lang>/ folder of the catalogue.
set -uo pipefail
out=${1:?usage: gpu_dialects.sh OUT_FILE ["KATA/LANG ..."]}
pairs=${2:-$(cd solutions && ls -d */triton */numba 2>/dev/null | tr '\n' ' ')}
scratch=$(mktemp -d)
export KATA_HOME=${KATA_HOME:-$scratch/kata-home}
{
  date -u +"%Y-%m-%d %H:%M UTC"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  echo
  echo "| kata | language | case | median | score | library | tier | flags |"
  echo "|---|---|---|---|---|---|---|---|"
} >"$out"
for pair in $pairs; do
  if [[ $pair == *=* ]]; then
    kata_id=${pair%%=*}; folder=${pair#*=}; lang=$(basename "$folder")
  else
    kata_id=${pair%/*}; lang=${pair#*/}; folder=solutions/$kata_id/$lang
  fi
  timeout "${EACH_S:-120}" python3 -m grader bench "$folder" --kata "$kata_id" \
    --out "$scratch/$kata_id-$lang" >"$scratch/$kata_id-$lang.log" 2>&1
  code=$?
  if [ -f "$scratch/$kata_id-$lang/bench.md" ]; then
    grep "^| $kata_id " "$scratch/$kata_id-$lang/bench.md" | sed "s#| $folder |#| $lang |#" >>"$out"
  else
    echo "| $kata_id | $lang | - | - | - | - | error (exit $code) | $(tail -1 "$scratch/$kata_id-$lang.log" | cut -c1-120) |" >>"$out"
  fi
done
cat "$out"

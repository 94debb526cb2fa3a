#!/bin/bash
# Re-time kata solutions against their libraries on the device, one kata at a time so a cap loses
# only the kata it stops (from the repo root): bash lab/device_rebench.sh OUT "ID ..." [EACH_S]
# Writes OUT/bench.md (a row per case, appended as each kata finishes), OUT/bench.txt (the log)
# and OUT/calibrate.txt.
out=${1:?usage: device_rebench.sh OUT "ID ..." [EACH_S]}; ids=$2; each=${3:-60}
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
export KATA_HOME=${KATA_HOME:-$(mktemp -d)}
scratch=$(mktemp -d)
{ date -u +"%Y-%m-%d %H:%M UTC"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$out/bench.txt"
python3 -m grader calibrate >"$out/calibrate.txt" 2>&1
for id in $ids; do
  t0=$(date +%s)
  timeout "$each" python3 -m grader bench "$id" --out "$scratch/$id" >>"$out/bench.txt" 2>&1
  echo "== $id: exit $? in $(( $(date +%s) - t0 )) s" >>"$out/bench.txt"
  if [ -f "$scratch/$id/bench.md" ]; then
    [ -f "$out/bench.md" ] && tail -n +3 "$scratch/$id/bench.md" >>"$out/bench.md" || cp "$scratch/$id/bench.md" "$out/bench.md"
  fi
done

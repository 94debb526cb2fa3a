#!/usr/bin/env bash
# Device job (model refit): times the performance model's calibration set on the H200 with kata's
# timing method as it is now (events, the read flush, the noise rule), so lab/model/fit.py can
# refit the constants after the read-flush change. Writes $JOBOUT/calibration/measurements.json.
# Expected run time: ~200 s (the measurement's own budget is 190 s; each kernel's result is
# written as soon as it is timed, so a cut run keeps what it measured).
set -u
cd "$(dirname "$0")/../.."
: "${JOBOUT:=${OUT:-./device-out}}"
mkdir -p "$JOBOUT/calibration"
source lab/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$JOBOUT/gpu.txt" 2>&1 || true
timeout 225 python3 lab/model/measure_h200.py "$JOBOUT/calibration" --budget-s 190 \
  > "$JOBOUT/calibration/log.txt" 2>&1 || echo "measure_h200 exited $?" >> "$JOBOUT/calibration/log.txt"
tail -5 "$JOBOUT/calibration/log.txt" || true
python3 - "$JOBOUT/calibration/measurements.json" <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
print(len([r for r in d["results"] if "median_s" in r]), "kernel-cases timed in", d.get("wall_s"), "s")
PY

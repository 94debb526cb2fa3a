#!/usr/bin/env bash
# kata serve on the GPU: grades per minute with the GPU backend (one grading slot on the one GPU),
# through the same load script as the CPU figures (lab/server_load.py), loopback only.
# Run from the repo root; writes under $JOBOUT. Expected run time: about 80 s (hard cap 85 s).
# DRY=1: the same steps with a stand-in grader and the CPU backend (tries the script without a GPU).
set -u
: "${JOBOUT:=$PWD/jobout}"
mkdir -p "$JOBOUT"
export KATA_HOME="$(mktemp -d)"
if [ -z "${DRY:-}" ]; then
  source lab/device_env.sh
  PY=python3
  BACKEND=(--backend gpu --workers 1)
else
  PY=${PY:-python3}
  BACKEND=(--backend cpu --workers 1 --grade-function tests.grader.server.fake_grade:grade)
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  $PY -c "import fastapi, uvicorn, sqlalchemy, alembic; print('server deps ok')" 2>&1
  $PY -c "from harness.sandbox import os_sandbox; print('sandbox probe', os_sandbox.probe())" 2>&1 | tail -3
} > "$JOBOUT/env.txt"
# 16 candidates upload vector-add at once (every fifth a wrong kernel); candidates stop waiting after
# 45 s, so the figure is the grades finished in the window, per minute (server-gpu.progress.json
# keeps the count every 2 s, should the run be cut short).
timeout 70 $PY lab/server_load.py "${BACKEND[@]}" --candidates 16 --poll 0.5 --timeout 45 \
  --out "$JOBOUT/server-gpu.json" > "$JOBOUT/server-gpu.log" 2>&1 || echo "server_load exit $?" >> "$JOBOUT/server-gpu.log"
latest=$(ls -td "${TMPDIR:-/tmp}"/kata-serve-bench-* 2>/dev/null | head -1)
[ -n "$latest" ] && tail -c 100000 "$latest/server.log" > "$JOBOUT/server-tail.log" 2>/dev/null
cat "$JOBOUT/env.txt"
grep -E '"(graded|errors|verdicts_as_expected|pending_at_end|lost|grades_per_minute|upload_to_report_p50_s|upload_to_report_p95_s|mean_grade_s|secrets_leaked|wall_s)"' \
  "$JOBOUT/server-gpu.json" 2>/dev/null || { tail -20 "$JOBOUT/server-gpu.log"; cat "$JOBOUT/server-gpu.progress.json"; }

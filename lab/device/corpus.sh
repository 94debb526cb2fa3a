#!/bin/bash
# Issue 23's validation corpus on the GPU (run from the repo root on the device; results under $JOBOUT).
#   bash lab/device/corpus.sh                 # everything: ~160 s measured on 2026-12-02 (budget 400 s)
#   bash lab/device/corpus.sh transpose top-p # only these katas (and their solutions)
#   ONLY="spmv/thread_per_row bfs/frontier_queue" bash lab/device/corpus.sh spmv bfs   # only these designs
# Expected: the whole corpus ~190 s (installs and start-up ~30 s, measurement 148 s in run 1); the
# measurement stops starting kernels at --budget-s (BUDGET_S, default 400).
set -u
JOBOUT=${JOBOUT:-${OUT:-/tmp/corpus-out}}
mkdir -p "$JOBOUT/corpus"
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
export KATA_HOME=${KATA_HOME:-/tmp/kata-home-corpus}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,memory.total --format=csv > "$JOBOUT/corpus/gpu.txt" 2>&1 || true
KATAS=()
[ $# -gt 0 ] && KATAS=(--katas "$@")
# shellcheck disable=SC2206  # ONLY is a list of kata/design
[ -n "${ONLY:-}" ] && KATAS+=(--only $ONLY)
timeout $(( ${BUDGET_S:-400} + 40 )) python3 lab/validation/measure_h200.py "$JOBOUT/corpus" --budget-s "${BUDGET_S:-400}" \
  --workers "${WORKERS:-10}" "${KATAS[@]}" > "$JOBOUT/corpus/log.txt" 2>&1 || echo "measure_h200 exited with $?" >> "$JOBOUT/corpus/log.txt"
tail -5 "$JOBOUT/corpus/log.txt"
grep -c '"design"' "$JOBOUT/corpus/records.json" 2>/dev/null || true

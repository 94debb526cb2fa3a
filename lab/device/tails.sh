#!/bin/bash
# Issue 23: H200 times of the validation corpus' new heavy-tail, few-address-atomic and strided kernels
# (run from the repo root on the device; results under $JOBOUT/corpus). Expected ~150 s: installs and
# start-up ~30 s, input generation (RMAT at scale 22, three SpMV matrices) and measurement ~100 s;
# measure_h200.py stops starting kernels at its --budget-s.
set -u
JOBOUT=${JOBOUT:-${OUT:-/tmp/tails-out}}
mkdir -p "$JOBOUT/corpus"
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
export KATA_HOME=/tmp/kata-home-tails
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,memory.total --format=csv > "$JOBOUT/corpus/gpu.txt" 2>&1 || true
NEW=(spmv/thread_per_row_unrolled4 spmv/warp_per_row_lane_atomics bfs/thread_per_vertex_frontier_flags
     layernorm-backward/warp_per_row_column_atomics rmsnorm/block_per_row_chunked)
timeout 280 python3 lab/validation/measure_h200.py "$JOBOUT/corpus" --budget-s 220 --workers 8 \
  --katas spmv bfs layernorm-backward rmsnorm --only "${NEW[@]}" > "$JOBOUT/corpus/log.txt" 2>&1 \
  || echo "measure_h200 exited with $?" >> "$JOBOUT/corpus/log.txt"
tail -8 "$JOBOUT/corpus/log.txt"
grep -c '"design"' "$JOBOUT/corpus/records.json" 2>/dev/null || true

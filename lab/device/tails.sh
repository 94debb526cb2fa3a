#!/bin/bash
# Issue 23: H200 times of the validation corpus' heavy-tail, few-address-atomic and strided kernels
# written after the model's fit, beside their katas' solutions (run from the repo root on the
# device; results under $JOBOUT/corpus). Expected ~150 s: installs and start-up ~30 s, input
# generation (RMAT at scale 22, three SpMV matrices) and measurement ~100 s. Timed on 2026-12-02
# (lab/validation/h200/2026-12-02-tails/).
ONLY="spmv/thread_per_row_unrolled4 spmv/warp_per_row_lane_atomics bfs/thread_per_vertex_frontier_flags
      layernorm-backward/warp_per_row_column_atomics rmsnorm/block_per_row_chunked" \
  BUDGET_S=220 WORKERS=8 JOBOUT=${JOBOUT:-${OUT:-/tmp/tails-out}} KATA_HOME=/tmp/kata-home-tails \
  exec bash lab/device/corpus.sh spmv bfs layernorm-backward rmsnorm

#!/bin/bash
# Issue 23, run 3: re-time topk (bitonic_sort_row_shared gained a global path) and cross-check
# measure_h200.py against kata's own GPU grade on two corpus kernels. Expected ~200 s.
set -u
JOBOUT=${JOBOUT:-${OUT:-/tmp/corpus-out}}
BUDGET_S=90 bash lab/device/corpus.sh topk
. lab/device_env.sh  # the wheels' PYTHONPATH for this shell too
export KATA_HOME=/tmp/kata-home-corpus
mkdir -p "$JOBOUT/crosscheck"
for kd in reduce/one_block_shared_tree spmv/thread_per_row; do
  timeout 150 python3 -m grader grade "lab/validation/$kd" --kata "${kd%%/*}" --backend gpu --json \
    > "$JOBOUT/crosscheck/${kd//\//__}.json" 2> "$JOBOUT/crosscheck/${kd//\//__}.err" || echo "$kd exited with $?"
done
ls -la "$JOBOUT/crosscheck"

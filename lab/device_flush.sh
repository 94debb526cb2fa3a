#!/bin/bash
# call 1: the L2 flush hypothesis for qgemv (run from the repo root on the device)
set -x
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
export KATA_HOME=/tmp/kh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $OUT/smi.txt
timeout 120 python3 lab/flush_probe.py --out $OUT/flush_probe.md > $OUT/flush_probe.log 2>&1
V="solutions/qgemv lab/variants/qgemv/rows32 lab/variants/qgemv/persist_ring lab/variants/qgemv/ring_split lab/variants/qgemv/fma_magic lab/variants/qgemv/previous"
for m in write read; do timeout 150 python3 lab/quick_time.py qgemv $V --flush $m; done > $OUT/qt.txt 2>&1
C='{"N": 28672, "K": 8192}'
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum
for m in write read; do echo "== flush $m"; timeout 90 ncu --clock-control none --cache-control none -k regex:qgemv --metrics $M python3 lab/quick_time.py qgemv solutions/qgemv --case "$C" --runs 2 --flush $m; done > $OUT/ncu_flush.txt 2>&1
M2=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum
timeout 90 ncu --clock-control none -k regex:qgemv --metrics $M2 python3 lab/quick_time.py qgemv solutions/qgemv --runs 1 > $OUT/ncu_sol.txt 2>&1
ls -la $OUT

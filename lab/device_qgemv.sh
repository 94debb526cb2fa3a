#!/bin/bash
# qgemv variants on the device (from the repo root): calibrate, make the configurations named in
# CFGS by sed (NAME:BASE:STAGES:GPS:MINB over a variant whose kernel.cu has #define STAGES/GPS/MINB
# lines and whose launch.py has a "STAGES, GPS = s, g" line), time them beside DIRS, profile PROF.
# Results under $OUT.
set -x
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
export KATA_HOME=/tmp/kh
made=""
for cfg in $CFGS; do
  IFS=: read name base st gps mb <<<"$cfg"; mkdir -p /tmp/qv/$name; made="$made /tmp/qv/$name"
  sed -e "s/^#define STAGES [0-9]* /#define STAGES $st /" -e "s/^#define GPS [0-9]* /#define GPS $gps /" \
      -e "s/^#define MINB [0-9]* /#define MINB $mb /" $base/kernel.cu > /tmp/qv/$name/kernel.cu
  sed "s/^STAGES, GPS = .*/STAGES, GPS = $st, $gps/" $base/launch.py > /tmp/qv/$name/launch.py
done
timeout 60 python3 -m grader calibrate > $OUT/calibrate.txt 2>&1
timeout ${QT_S:-240} python3 lab/quick_time.py qgemv $DIRS $made > $OUT/qt.txt 2>&1
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
[ -n "$PROF" ] && timeout 90 ncu --clock-control none -k regex:qgemv --metrics $M python3 lab/quick_time.py qgemv $PROF --runs 1 > $OUT/ncu.txt 2>&1
ls -la $OUT

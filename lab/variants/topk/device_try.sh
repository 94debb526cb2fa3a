# One device call: time topk variants against the solution and profile the candidates under ncu.
#   bash lab/variants/topk/device_try.sh OUT "DIRS" "PROFILE_DIRS"
out=$1; dirs=$2; prof=$3
scratch=$(mktemp -d)  # ncu reports (several MB each): summaries go to OUT
export PYTHONUNBUFFERED=1 KATA_HOME=${KATA_HOME:-$scratch/kata-home}
python3 -m grader calibrate >/dev/null 2>&1
python3 lab/quick_time.py topk $dirs 2>&1 | tee $out/times.txt
for d in $prof; do
  n=$(basename $d)
  for c in '{"R":16384,"L":4096,"k":8}' '{"R":16384,"L":4096,"k":64}' '{"R":4096,"L":16384,"k":1024}'; do
    tag=$(echo $c | tr -dc 0-9 | tail -c 5)
    ncu -k regex:topk --launch-count 1 --set full --import-source yes -f -o $scratch/p_${n}_$tag \
      python3 lab/quick_time.py topk $d --runs 1 --case "$c" >/dev/null 2>&1
    ncu -i $scratch/p_${n}_$tag.ncu-rep --page details 2>&1 | grep -E "Duration|Compute \(SM\) Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issued Warp Per" | sed "s/^/$n $tag /"
    ncu -i $scratch/p_${n}_$tag.ncu-rep --page source --csv --print-source sass > $out/sass_${n}_$tag.csv 2>&1
  done
done 2>&1 | tee $out/ncu.txt

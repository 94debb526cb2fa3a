#!/usr/bin/env bash
# One device call: install kata, run the GPU tests, then lab/gpu_suite.py with the parts given.
#   bash lab/gpu_run.sh OUT_DIR [gpu_suite.py options...]
# Everything lands in OUT_DIR: nvidia-smi.txt, gpu_tests.txt and the suite's results.{md,json},
# roofline.png and suite.log.
set -uo pipefail
out=${1:?usage: gpu_run.sh OUT_DIR [suite options]}
shift
mkdir -p "$out"
export KATA_HOME=${KATA_HOME:-$(mktemp -d)/kata-home}
python3 -m pip install --no-deps --no-build-isolation -e . -q >"$out/install.txt" 2>&1 || tail -5 "$out/install.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
  --format=csv >"$out/nvidia-smi.txt" 2>&1
cat "$out/nvidia-smi.txt"
python3 -c "import harness.frontends.nvrtc as c; print('NVRTC', c.nvrtc_version())"
if [ -z "${SKIP_TESTS:-}" ]; then
  timeout 240 python3 -m pytest tests/gpu -q -m gpu -p no:cacheprovider -rs >"$out/gpu_tests.txt" 2>&1
  tail -25 "$out/gpu_tests.txt"
fi
python3 lab/gpu_suite.py "$out" "$@"
tail -60 "$out/results.md"

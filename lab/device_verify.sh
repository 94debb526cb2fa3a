#!/usr/bin/env bash
# One device call that verifies the GPU side of the tree:
#   1. the GPU tests with KATA_REQUIRE_GPU=1 (a missing or broken GPU fails them, never skips);
#   2. the tensor-core zoo on the device against the emulator (lab/tc_zoo_gpu.py);
#   3. lab/gpu_katas.sh: `kata dev check --backend gpu` of KATA_IDS (CUDA C, Triton and numba
#      solutions and their wrong kernels), `kata bench` of BENCH_IDS, and VARIANT_DIRS timed.
#   bash lab/device_verify.sh OUT_DIR ["KATA_IDS"] ["VARIANT_DIRS"]
# Header wheels the device image lacks (nvidia-cuda-crt for <mma.h>, nvidia-cuda-cccl for
# cooperative groups) are installed from .whl/ when that (git-ignored) folder was carried.
# Env: TESTS (default tests/gpu), TESTS_S (pytest's cap, default 240), ZOO_S (default 90), ZOO_ARGS (e.g. "--only cg_tile_reduce"), SKIP_TESTS=1, and gpu_katas.sh's.
# Writes at most 8 files under OUT_DIR (the device tool's limit): gpu_tests.txt, tc_zoo.txt, k/*.
set -uo pipefail
out=${1:?usage: device_verify.sh OUT_DIR ["KATA_IDS"] ["VARIANT_DIRS"]}
ids=${2:-}
variants=${3:-}
mkdir -p "$out"
. lab/device_env.sh  # wheels from .whl/, kata from the working tree
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  {
    date -u +"%Y-%m-%d %H:%M UTC"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    KATA_REQUIRE_GPU=1 timeout "${TESTS_S:-240}" python3 -m pytest ${TESTS:-tests/gpu} -m gpu -v -rfE --tb=short \
      -p no:cacheprovider --durations=10
    echo "pytest tests/gpu: exit $?"
  } >"$out/gpu_tests.txt" 2>&1
  tail -15 "$out/gpu_tests.txt"
  timeout "${ZOO_S:-90}" python3 lab/tc_zoo_gpu.py ${ZOO_ARGS:-} >"$out/tc_zoo.txt" 2>&1
  echo "tc_zoo_gpu: exit $?" >>"$out/tc_zoo.txt"
  tail -5 "$out/tc_zoo.txt"
fi
if [ -n "$ids$variants" ]; then
  BENCH_IDS=${BENCH_IDS:-} bash lab/gpu_katas.sh "$out/k" "$ids" "$variants"
fi

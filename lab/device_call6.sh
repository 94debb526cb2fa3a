export PYTHONPATH=; python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
python3 -m pip install --no-deps --no-build-isolation -e . -q >/dev/null 2>&1
export KATA_HOME=/tmp/kh
for i in 1 2 3; do python3 -m grader calibrate 2>&1 | tail -2 | head -1; sleep 3; done > $OUT/calibrations.txt
KATA_REQUIRE_GPU=1 timeout 120 python3 -m pytest tests/gpu/test_gpu_timing.py tests/gpu/test_gpu_perf.py -m gpu -v -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1; echo "exit $?" >> $OUT/gpu_tests.txt
mkdir -p $OUT/r; timeout 300 bash lab/device_rebench.sh $OUT/r "spmv topk matmul attention matmul-backward layernorm-backward adamw attention-backward bfs" 50

# Sourced by the device scripts (from the repo root): the wheels the device image lacks (header
# wheels nvidia-cuda-crt and nvidia-cuda-cccl, platformdirs), from the git-ignored .whl/ when it
# was carried, onto PYTHONPATH; then kata itself from the working tree. KATA_HOME is the caller's.
if ls .whl/*.whl >/dev/null 2>&1; then
  _site=$(mktemp -d)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$_site" .whl/*.whl
  export PYTHONPATH="$_site${PYTHONPATH:+:$PYTHONPATH}"
fi
python3 -m pip install --no-deps --no-build-isolation -e . -q >/dev/null 2>&1

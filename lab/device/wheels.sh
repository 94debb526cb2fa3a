#!/bin/bash
# Fills the git-ignored .whl/ with the wheels the device image lacks (kata's own dependencies that
# are not in its Python, and CUDA 13.0's header wheels to match its NVRTC), for Python 3.12.
# Run here, from the repo root, before the first device call of a fresh checkout; carry ".whl".
set -eu
PKGS="msgspec==0.23.0 platformdirs==4.14.9 tomli-w==1.2.0 watchfiles==1.3.0
fastapi==0.165.0 starlette==1.10.0 pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0
typing-inspection==0.4.5 opentelemetry-api==1.45.2 uvicorn==0.54.0 sqlalchemy==2.1.9 alembic==1.20.1 mako==1.4.3
nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85"
mkdir -p .whl
grep -qx '/.whl/' .gitignore || echo '/.whl/' >> .git/info/exclude
for p in $PKGS; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform manylinux_2_24_x86_64 \
    -d .whl "$p" || echo "no wheel for $p" >&2
done
du -sh .whl

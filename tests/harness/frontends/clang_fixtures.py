"""Fixtures of the clang front end's tests (imported by them; tests/harness/frontends/conftest.py belongs to
the Triton and numba front ends). The CUDA folder for these tests: made once (`kata setup` downloads it from PyPI
when CI has not already), then named by KATA_CLANG_CUDA, since each grade gets its own KATA_HOME."""
from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def clang_folder():
    from harness.frontends import clang, cuda_folder

    # CI installs ziglang (the dev extra) and reaches PyPI: there a missing front end is a failure
    miss = pytest.fail if os.environ.get("CI") else pytest.skip
    if not clang.available():
        miss("the clang front end is not installed (pip install ziglang)")
    saved = os.environ.pop("KATA_HOME", None)  # the folder lives in the real data dir, shared by runs
    try:
        root = cuda_folder.setup(say=lambda s: None)
    except cuda_folder.SetupNeeded as exc:
        miss(f"the clang front end's CUDA folder could not be made: {exc}")
    finally:
        if saved is not None:
            os.environ["KATA_HOME"] = saved
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(cuda_folder.ENV, str(root))
        yield root


@pytest.fixture
def nvrtc_or_skip():
    from harness.frontends import nvrtc

    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")

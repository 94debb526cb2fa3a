"""GPU tests: marked @pytest.mark.gpu, skipped wherever CuPy sees no CUDA device (CI, laptops).

They share one calibration per session, cached in a temporary KATA_HOME so a developer's own
calibration is never overwritten by a test run.
"""
import os
import tempfile

import pytest

from harness.backends.gpu import available

_HAVE_GPU = available()


def pytest_collection_modifyitems(config, items):
    if _HAVE_GPU:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU with CuPy (run on the device; CI has none)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def kata_home():
    old = os.environ.get("KATA_HOME")
    with tempfile.TemporaryDirectory(prefix="kata-gpu-tests-") as home:
        os.environ["KATA_HOME"] = home
        yield home
    if old is None:
        os.environ.pop("KATA_HOME", None)
    else:
        os.environ["KATA_HOME"] = old


@pytest.fixture(scope="session")
def backend(kata_home):
    from harness.backends.gpu import GpuBackend

    b = GpuBackend()
    yield b
    b.close()


@pytest.fixture(scope="session")
def calibration(backend):
    from harness.measure.calibrate import load_or_calibrate

    cal, _ = load_or_calibrate(backend)
    return cal

"""GPU tests: marked @pytest.mark.gpu, skipped wherever CuPy sees no CUDA device (CI, laptops).

They share one calibration per session, cached in a temporary KATA_HOME so a developer's own
calibration is never overwritten by a test run.

On the grading machine run them with KATA_REQUIRE_GPU=1: a missing or broken GPU (CuPy absent, no
device, a driver error) is then a failure of every GPU test, with the reason, never a skip.
"""
import os
import tempfile

import pytest

from harness.backends.gpu import available

_HAVE_GPU = available()
_REQUIRED = os.environ.get("KATA_REQUIRE_GPU", "") not in ("", "0")


def _why_no_gpu() -> str:
    try:
        from harness.backends.gpu import _import_cupy

        _import_cupy()
    except Exception as exc:  # noqa: BLE001 - the reason is the message
        return f"{type(exc).__name__}: {exc}"
    return "unknown"


def pytest_collection_modifyitems(config, items):
    if _HAVE_GPU:
        return
    if _REQUIRED:
        return  # _require_gpu fails them, before any fixture touches CuPy
    skip = pytest.mark.skip(reason="needs a CUDA GPU with CuPy (run on the device; CI has none; "
                                   "KATA_REQUIRE_GPU=1 makes this a failure)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _require_gpu():
    if _REQUIRED and not _HAVE_GPU:
        pytest.fail(f"KATA_REQUIRE_GPU=1 and no usable GPU: {_why_no_gpu()}", pytrace=False)


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

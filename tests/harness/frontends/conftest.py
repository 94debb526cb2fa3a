"""Fixtures of the front ends' tests. Commands run from the test's temporary folder. The clang front
end's CUDA folder is the root conftest's clang_folder."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _from_tmp(in_tmp):
    return in_tmp


@pytest.fixture
def nvrtc_or_skip():
    from harness.frontends import nvrtc

    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")

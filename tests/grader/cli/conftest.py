import pytest


@pytest.fixture(autouse=True)
def _from_tmp(in_tmp):
    """The commands run from the test's temporary folder (`kata start reduce` makes ./reduce there)."""
    return in_tmp

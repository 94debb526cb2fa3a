"""test_core once more with box runs tried for every launch and lane group however small
(boxes.BOX_MIN = boxes.LAUNCH_MIN = 1), so its integer, float, memory and scheduler edge cases
also go through the 2-D fast paths."""
import pytest

from harness.emulator import boxes
from test_core import *  # noqa: F401,F403  (the same tests, collected again under this module)


@pytest.fixture(autouse=True)
def _boxes_for_every_group(monkeypatch):
    monkeypatch.setattr(boxes, "BOX_MIN", 1)
    monkeypatch.setattr(boxes, "LAUNCH_MIN", 1)

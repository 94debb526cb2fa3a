"""The house move changed no report: each solution and one wrong kernel per kata graded on the CPU
give the JSON recorded from the tree before the move (tests/golden/reports/, by golden.py), times
and temporary paths aside."""
import json
from pathlib import Path

import pytest

import golden as make

REPORTS = Path(__file__).parent / "reports"
SUBJECTS = list(make.subjects_names())


@pytest.mark.slow
@pytest.mark.parametrize("name, kata, bug", SUBJECTS, ids=[s[0] for s in SUBJECTS])
def test_report_unchanged(name, kata, bug, tmp_path):
    folder = make.ROOT / "solutions" / kata if bug is None else make.wrong_folder(kata, bug, tmp_path)
    got = make.grade(folder, kata)
    want = json.loads((REPORTS / f"{name}.json").read_text())
    assert got == make.normalise(want)

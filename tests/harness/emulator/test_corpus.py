"""The real-code corpus (tests/harness/emulator/corpus): kernels in the idioms of public training code and
kernel ladders, each against numpy with the sanitizer on. Every case must be correct with no
finding; lab/corpus_counts.py records the counts in lab/results/corpus.md."""
import importlib.util
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "corpus"
sys.path.insert(0, str(CORPUS))

import _corpus  # noqa: E402

for path in sorted(CORPUS.glob("cases_*.py")):
    spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def test_the_corpus_has_forty_kernels_and_every_file_is_used():
    assert sum(k for _, _, k in _corpus.CASES.values()) >= 40
    sources = {p.stem for p in CORPUS.glob("*.cu")}
    assert sources == {src for src, _, _ in _corpus.CASES.values()}


@pytest.mark.parametrize("name", sorted(_corpus.CASES))
def test_corpus(name):
    verdict, detail = _corpus.outcome(name)
    assert verdict == "correct", f"{verdict}: {detail}"

"""`kata dev check` over the whole catalogue, one test per kata so CI's workers share them: each
stub fails, each solution passes on public, drawn and hidden cases, and each wrong/ kernel fails
for the reason its kata-expect line names (reduce is checked through the CLI in tests/grader/cli)."""
import pytest

from grader.devcheck import audit
from grader import catalog

IDS = [i for i in catalog.ids() if i != "reduce"]


@pytest.mark.slow
@pytest.mark.parametrize("kata_id", IDS)
def test_dev_check(kata_id, tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    bad = [c for c in audit.check([kata_id]) if not c.ok]
    assert not bad, "\n".join(f"{c.item}: expected {c.expected}, got {c.got} · {c.detail}" for c in bad)

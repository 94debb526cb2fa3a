"""The zoo: kernels written as learners and textbooks write them, run on the emulator at several
sizes (ragged ones included) and compared with numpy; none may raise a finding."""
import importlib.util
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

ZOO = Path(__file__).parent / "zoo"
sys.path.insert(0, str(ZOO))

import _zoo  # noqa: E402

for path in sorted(ZOO.glob("cases_*.py")):
    spec = importlib.util.spec_from_file_location(f"zoo_{path.stem}", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))

PARAMS = [pytest.param(name, size, id=f"{name}-{size}")
          for name, (_, sizes, _, _) in sorted(_zoo.CASES.items()) for size in sizes]


def test_the_zoo_is_big_and_every_kernel_file_has_a_case():
    sources = {p.stem for p in ZOO.glob("*.cu")}
    used = {src for src, _, _, _ in _zoo.CASES.values()}
    assert len(sources) >= 30
    assert sources == used, f"kernels without a case: {sources - used}; cases without a kernel: {used - sources}"


@pytest.mark.parametrize("stem", sorted(p.stem for p in ZOO.glob("*.cu")))
def test_compiles_without_warnings(stem):
    r = _zoo.compiled(stem)
    assert not r.warnings, r.log


@pytest.mark.parametrize("name,size", PARAMS)
def test_zoo(name, size):
    if not hasattr(pytest.importorskip("harness.emulator"), "Emulator"):
        pytest.skip("the emulator core is not there yet")
    source, _, fn, options = _zoo.CASES[name]
    dev = _zoo.Device(source, **options)
    fn(dev, size, np.random.default_rng(zlib.crc32(f"{name}-{size}".encode())))
    findings = [f"{f.kind} {f.where()}: {f.message}" for f in dev.emu.findings]
    assert not findings, "false positives:\n" + "\n".join(findings)

"""The real-code corpus' driver: kernels written in the idioms of public training code and kernel
ladders (not the project's style), each launched like its host program would and checked against
a numpy reference. A case is `name(dev, rng)`; dev is the zoo's Device over a .cu of this folder.

outcome() classifies a case the way lab/results/corpus.md counts them: correct, wrong (the
reference disagrees), unsupported (UnsupportedPTX), false-finding (correct output but a finding).
"""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

import _zoo

CORPUS = Path(__file__).parent

CASES: dict[str, tuple[str, object, int]] = {}  # name -> (.cu stem, function, kernels it covers)


def case(source: str, kernels: int = 1):
    """Register a case running corpus/<source>.cu; `kernels`: how many kernel versions it checks."""
    def register(fn):
        CASES[fn.__name__] = (source, fn, kernels)
        return fn
    return register


class Device(_zoo.Device):
    """The zoo's device, compiling with this folder's headers (common.cuh) within the compile's reach
    (include_dir: the compile jail copies them in; an -I to elsewhere is not readable there)."""

    def __init__(self, stem: str, **options):
        from harness.frontends.nvrtc import compile
        from harness.emulator import Emulator

        self.filename = f"{stem}.cu"
        self.emu = Emulator(**{"sanitize": True, "counters": False, "wall_clock_s": 120.0, **options})
        # the compile cache keys on the source and options only: the header's hash joins the options
        stamp = zlib.crc32((CORPUS / "common.cuh").read_bytes())
        r = compile((CORPUS / self.filename).read_text(), filename=self.filename,
                    options=(f"-DCORPUS_COMMON={stamp}",), include_dir=CORPUS)
        assert r.ok, r.log
        self.mod = self.emu.load(r.ptx, filename=self.filename)
        self.results = []

    def kernel(self, base: str, suffix: str = "") -> str:
        """The entry of a template instantiation: its mangled name starting with base's."""
        names = [k for k in self.mod.kernels if k == base or k.startswith(f"_Z{len(base)}{base}")]
        names = [k for k in names if suffix in k]
        assert names, f"no kernel {base} ({suffix}) in {sorted(self.mod.kernels)}"
        return sorted(names, key=len)[0]


def cdiv_(a: int, b: int) -> int:
    return -(-int(a) // int(b))


def bf16(a) -> np.ndarray:
    """float32 -> bfloat16 bits, rounding to nearest even."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def f32(bits) -> np.ndarray:
    """bfloat16 bits -> float32."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def close(got, want, rtol, atol, what):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    if bad.any():
        i = np.flatnonzero(bad.ravel())[0]
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} differ; first at {i}: got "
                             f"{got.ravel()[i]}, want {want.ravel()[i]}")


def outcome(name: str, seed: int = 0) -> tuple[str, str]:
    """(correct | wrong | unsupported | false-finding, detail) of one case."""
    from harness.emulator import UnsupportedPTX

    source, fn, _ = CASES[name]
    try:
        dev = Device(source)
        fn(dev, np.random.default_rng(seed))
    except UnsupportedPTX as exc:
        return "unsupported", str(exc)
    except AssertionError as exc:
        return "wrong", str(exc).split("\n")[0]
    findings = [f"{f.kind} {f.where()}: {f.message}" for f in dev.emu.findings]
    return ("false-finding", findings[0]) if findings else ("correct", "")

"""Runs of f32 register arithmetic executed in one compiled pass (fused.py) compute what one
instruction at a time computes, bit for bit: chains that read what the run just wrote, immediates,
a join label inside the run where other lanes wait, lane sets that are no range (odd lanes), and
the counters' per-instruction tallies."""
from __future__ import annotations

import numpy as np
import pytest

from harness.emulator import Emulator, fused

# Odd lanes jump into the middle of the run at MID; even lanes run its first half, wait for them
# there, and all finish it together. Every result feeds the next: a dependency chain.
CHAIN = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_x, .param .u64 k_y)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	.reg .f32 	%f<16>;
	.reg .b64 	%rd<8>;
	ld.param.u64 	%rd1, [k_x];
	ld.param.u64 	%rd2, [k_y];
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r1, %r1, %r2, %r3;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd1, %rd3;
	ld.global.f32 	%f1, [%rd4];
	and.b32 	%r3, %r3, 1;
	setp.eq.u32 	%p1, %r3, 1;
	@%p1 bra 	MID;
	fma.rn.f32 	%f2, %f1, %f1, 0f3F800000;
	mul.rn.f32 	%f3, %f2, %f1;
	add.f32 	%f4, %f3, 0f40000000;
	sub.rn.f32 	%f5, %f4, %f1;
	fma.rn.f32 	%f4, %f5, %f1, %f4;
MID:
	sub.f32 	%f6, %f4, %f1;
	fma.rn.f32 	%f7, %f6, %f6, %f2;
	fma.rn.f32 	%f8, %f7, %f1, %f7;
	mul.f32 	%f9, %f8, 0f3DCCCCCD;
	add.rn.f32 	%f10, %f9, %f8;
	fma.rn.f32 	%f11, %f10, 0f3EAAAAAB, %f9;
	mad.rn.f32 	%f12, %f11, %f11, %f10;
	fma.rn.f32 	%f1, %f12, %f1, %f11;
	add.s64 	%rd5, %rd2, %rd3;
	st.global.f32 	[%rd5], %f1;
	ret;
}
"""


def _run(monkeypatch, fuse: bool, **kw):
    if not fuse:
        monkeypatch.setattr(fused, "MIN_RUN", 1 << 30)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(8 * 96).astype(np.float32) * np.float32(1e3)
    x[:6] = [np.nan, np.inf, -np.inf, 1e-40, -0.0, 3.4e38]  # NaN, infinities, a subnormal, overflow
    emu = Emulator(**kw)
    mod = emu.load(CHAIN, "chain.ptx")
    px, py = emu.alloc(x.nbytes), emu.alloc(x.nbytes)
    emu.write(px, x)
    emu.memset(py, 0, x.nbytes)
    res = emu.launch(mod, "k", grid=(8, 1, 1), block=(96, 1, 1), args=[px, py])
    return emu.read(py, np.uint32, x.size), res


@pytest.mark.parametrize("kw", [dict(), dict(sanitize=True), dict(sanitize=True, counters=True)],
                         ids=["plain", "sanitizer", "counters"])
def test_a_fused_run_computes_the_bits_one_instruction_at_a_time_computes(kw, monkeypatch):
    fast, fres = _run(monkeypatch, True, **kw)
    with monkeypatch.context() as m:
        slow, sres = _run(m, False, **kw)
    assert np.array_equal(fast, slow)
    assert fres.instructions == sres.instructions
    assert [f.kind for f in fres.findings] == [f.kind for f in sres.findings]
    if kw.get("counters"):
        assert fres.counters.to_dict() == sres.counters.to_dict()


def test_the_chain_is_fused_at_all(monkeypatch):
    calls = []
    real = fused.run
    monkeypatch.setattr(fused, "run", lambda *a: calls.append(a[-1]) or real(*a))
    _run(monkeypatch, True)
    assert calls and max(calls) >= fused.MIN_RUN

"""Kernel parameters: offsets in the parameter buffer, by-value structs, parameter addresses.

`.ptr .global .align 1` on a pointer parameter (clang writes it) is the pointee's alignment; read
as the parameter's, it packed an 8-byte pointer at offset 4 after an int, so the parameter buffer
no longer had the layout of the GPU's ABI and a struct read through its address got wrong bytes.
"""
from __future__ import annotations

import numpy as np
import pytest

from harness.emulator import Emulator

STRUCT_KERNEL = r"""
struct Affine { float scale; int shift; double bias; };
extern "C" __global__ void k(int n, const float* __restrict__ x, Affine a, char tag, float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * a.scale + a.shift + (float)a.bias + tag;
}
"""

# What clang 22 makes of STRUCT_KERNEL (.loc lines left out): pointers marked `.ptr .align 1`, and
# the struct read through its address (`mov.b64 %rd3, k_param_2; ld.param [%rd3+8]`).
CLANG_PTX = """
.version 8.8
.target sm_90
.address_size 64
.visible .entry k(
	.param .u32 k_param_0,
	.param .u64 .ptr .align 1 k_param_1,
	.param .align 8 .b8 k_param_2[16],
	.param .u8 k_param_3,
	.param .u64 .ptr .align 1 k_param_4
)
{
	.reg .pred 	%p<2>;
	.reg .b16 	%rs<2>;
	.reg .b32 	%r<15>;
	.reg .b64 	%rd<10>;
	ld.param.b32 	%r2, [k_param_0];
	ld.param.b64 	%rd4, [k_param_1];
	cvta.to.global.u64 	%rd1, %rd4;
	ld.param.b64 	%rd5, [k_param_4];
	cvta.to.global.u64 	%rd2, %rd5;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	ld.param.s8 	%rs1, [k_param_3];
	mov.b64 	%rd3, k_param_2;
	mul.wide.s32 	%rd6, %r1, 4;
	add.s64 	%rd7, %rd1, %rd6;
	ld.global.nc.b32 	%r6, [%rd7];
	ld.param.v2.b32 	{%r7, %r8}, [%rd3];
	cvt.rn.f32.s32 	%r9, %r8;
	fma.rn.f32 	%r10, %r6, %r7, %r9;
	ld.param.b64 	%rd8, [%rd3+8];
	cvt.rn.f32.f64 	%r11, %rd8;
	add.f32 	%r12, %r10, %r11;
	cvt.rn.f32.s16 	%r13, %rs1;
	add.f32 	%r14, %r12, %r13;
	add.s64 	%rd9, %rd2, %rd6;
	st.global.b32 	[%rd9], %r14;
$L__BB0_2:
	ret;
}
"""

AFFINE = np.dtype([("scale", "<f4"), ("shift", "<i4"), ("bias", "<f8")])


def _run(ptx: str) -> tuple[list, np.ndarray, list]:
    emu = Emulator(sanitize=True, counters=False)
    mod = emu.load(ptx, "kernel.cu")
    n = 40
    x = np.arange(n, dtype=np.float32)
    px, po = emu.alloc(4 * n), emu.alloc(4 * n)
    emu.write(px, x)
    a = np.array([(2.0, 3, 0.5)], AFFINE)
    res = emu.launch(mod, "k", grid=(2, 1, 1), block=(32, 1, 1), args=[n, px, a.tobytes(), 1, po])
    return mod.kernels["k"].params, emu.read(po, np.float32, n), res.findings


def _expected() -> np.ndarray:
    return np.arange(40, dtype=np.float32) * 2.0 + 3 + 0.5 + 1


def test_pointer_alignment_is_the_pointees_and_a_struct_by_value_reads_its_bytes():
    params, out, findings = _run(CLANG_PTX)
    # the offsets of the GPU's ABI: each parameter at its own natural (or declared) alignment
    assert [(p.offset, p.size) for p in params] == [(0, 4), (8, 8), (16, 16), (32, 1), (40, 8)]
    assert findings == []
    np.testing.assert_array_equal(out, _expected())


def test_struct_by_value_from_nvrtc():
    nvrtc = pytest.importorskip("harness.frontends.nvrtc")
    try:
        res = nvrtc.compile(STRUCT_KERNEL, "kernel.cu")
    except nvrtc.CompilerUnavailable:
        pytest.skip("NVRTC is not installed")
    assert res.ok, res.log
    params, out, findings = _run(res.ptx)
    assert [p.offset for p in params] == [0, 8, 16, 32, 40]
    assert findings == []
    np.testing.assert_array_equal(out, _expected())

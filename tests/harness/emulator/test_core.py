"""The emulator core on kernels compiled by NVRTC, compared with numpy.

Loader features, integer/float edge cases, atomics under contention, warp shuffles, and the
scheduler's findings (divergent barrier, deadlock, watchdog, out-of-bounds, misaligned), each with
the learner's line. Run: pytest tests/harness/emulator/test_core.py -q
"""
from __future__ import annotations

import numpy as np
import pytest

from harness.frontends.nvrtc import compile
from harness.emulator import Emulator, EmulatorError, UnsupportedPTX

RNG = np.random.default_rng(7)


def line_of(src: str, marker: str) -> int:
    return next(i for i, text in enumerate(src.splitlines(), 1) if marker in text)


def run(src, name, grid, block, args, shared=0, emu=None, **kw):
    """Compile, copy numpy arrays to the device, launch, and return (outputs, result)."""
    r = compile(src, "kernel.cu")
    assert r.ok, r.log
    emu = emu or Emulator(**kw)
    mod = emu.load(r.ptx, "kernel.cu")
    real, bufs = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            p = emu.alloc(a.nbytes)
            emu.write(p, a)
            bufs.append((p, a))
            real.append(p)
        else:
            real.append(a)
    res = emu.launch(mod, name, grid=grid, block=block, shared_bytes=shared, args=real)
    return [emu.read(p, a.dtype, a.size).reshape(a.shape) for p, a in bufs], res


def kinds(res):
    return sorted({f.kind for f in res.findings})


# ---- the loader --------------------------------------------------------------------------------

LOADER = r'''
struct P { float a; int b; double c; };
__constant__ float cst[4] = {1, 2, 3, 4};
__device__ int gcount = 7;
__device__ __noinline__ float twice(float v, int k) { float t[4]; for (int j = 0; j < 4; j++) t[j] = v * j; return t[k & 3] + k; }
__global__ void loader(P p, float* out, int n) {
    extern __shared__ float dyn[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    dyn[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    if (i >= n) return;
    out[i] = p.a * cst[i & 3] + p.b + (float)p.c + gcount + twice(dyn[(threadIdx.x + 1) % blockDim.x], i);
}
'''


def test_loader_struct_param_const_global_func_local_dynamic_shared_and_mangled_name():
    n = 100
    p = np.zeros(1, dtype=[("a", "<f4"), ("b", "<i4"), ("c", "<f8")])
    p[0] = (1.5, 3, 0.25)
    (out,), res = run(LOADER, "loader", (2, 1, 1), (64, 1, 1), [p.tobytes(), np.zeros(n, np.float32), n],
                      shared=64 * 4)
    i = np.arange(n)
    nxt = ((i % 64) + 1) % 64
    want = 1.5 * np.array([1, 2, 3, 4])[i & 3] + 3 + 0.25 + 7 + (nxt * (i & 3) + i)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert res.findings == [] and not res.stopped


def test_kernel_params_are_listed_and_bad_ptx_is_an_emulator_error():
    r = compile(LOADER, "kernel.cu")
    mod = Emulator().load(r.ptx, "kernel.cu")
    k = mod.kernel("loader")
    assert [p.type for p in k.params] == ["b8", "u64", "u32"] and k.params[0].size == 16
    with pytest.raises(EmulatorError):
        Emulator().load("this is not PTX", "kernel.cu")
    with pytest.raises(EmulatorError, match="no kernel named"):
        mod.kernel("nope")


# ---- integer and float semantics ---------------------------------------------------------------

SEMANTICS = r'''
extern "C" __global__ void sem(const int* a, const int* b, const float* f, int* o, unsigned long long* w, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];
    float v = f[i];
    o[i * 8 + 0] = x / y;
    o[i * 8 + 1] = x % y;
    o[i * 8 + 2] = (int)v;                       // cvt.rzi.s32.f32: saturates, NaN -> 0
    o[i * 8 + 3] = (int)(unsigned char)__float2uint_rn(v);
    o[i * 8 + 4] = __mulhi(x, y);
    o[i * 8 + 5] = (v != v) + 2 * (v != 1.0f) + 4 * (v < 1.0f || v > 1.0f);  // setp.neu / setp.ne
    o[i * 8 + 6] = min(x, y) ^ max(x, y);
    o[i * 8 + 7] = __float2int_rn(v);
    w[i * 2 + 0] = __umul64hi((unsigned long long)x * 0x9E3779B97F4A7C15ull, (unsigned long long)y | 1ull << 63);
    w[i * 2 + 1] = (unsigned long long)((long long)x * y / 7);
}
'''


def _sat(x, lo, hi):
    return 0 if np.isnan(x) else int(min(max(x, lo), hi))


def test_integer_division_cvt_saturation_mulhi_and_nan_compare():
    xs = np.array([7, -7, 7, -7, 2**31 - 1, -2**31, 123456789, -5, 0, 100], np.int32)
    ys = np.array([2, 2, -2, -2, 3, 7, -98765, 3, 5, -1], np.int32)
    fs = np.array([1.0, -1.5, np.nan, 3e9, -3e9, 2.5, 3.5, -0.5, np.inf, 255.7], np.float32)
    n = xs.size
    (_, _, _, o, w), res = run(SEMANTICS, "sem", (1, 1, 1), (32, 1, 1),
                      [xs, ys, fs, np.zeros(n * 8, np.int32), np.zeros(n * 2, np.uint64), n])
    o = o.reshape(n, 8)
    for k in range(n):
        x, y, v = int(xs[k]), int(ys[k]), float(fs[k])
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        assert o[k, 0] == np.int32(np.int64(q)), (x, y)
        assert o[k, 1] == x - y * q, (x, y)
        assert o[k, 2] == _sat(np.trunc(v) if np.isfinite(v) else v, -2**31, 2**31 - 1)
        assert o[k, 3] == _sat(np.rint(v) if np.isfinite(v) else v, 0, 2**32 - 1) % 256
        assert o[k, 4] == (x * y) >> 32
        assert o[k, 5] == (3 if np.isnan(v) else 0 if v == 1.0 else 6)
        assert o[k, 6] == min(x, y) ^ max(x, y)
        assert o[k, 7] == _sat(np.rint(v) if np.isfinite(v) else v, -2**31, 2**31 - 1)
        a64 = (x % 2**64) * 0x9E3779B97F4A7C15 % 2**64
        b64 = (y % 2**64) | 1 << 63
        assert int(w[2 * k]) == (a64 * b64) >> 64
        p = x * y
        assert int(w[2 * k + 1]) == (abs(p) // 7 * (1 if p >= 0 else -1)) % 2**64
    assert res.findings == []


HALF = r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void halfk(const float* x, float* o, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    __half2 h = __floats2half2_rn(x[i], 2.0f * x[i]);
    h = __hfma2(h, h, __float2half2_rn(1.0f));
    __nv_bfloat16 b = __float2bfloat16(x[i]);
    b = __hmul(b, __float2bfloat16(3.0f));
    o[i * 3 + 0] = __low2float(h);
    o[i * 3 + 1] = __high2float(h);
    o[i * 3 + 2] = __bfloat162float(b);
}
'''


def test_half_and_bfloat16_arithmetic():
    x = np.array([0.5, -1.25, 3.0, 10.0, 0.1], np.float32)
    (_, o), res = run(HALF, "halfk", (1, 1, 1), (32, 1, 1), [x, np.zeros(15, np.float32), 5])
    o = o.reshape(5, 3)
    h = np.float16
    np.testing.assert_allclose(o[:, 0], (h(x) * h(x) + h(1)).astype(np.float32), rtol=1e-3)
    np.testing.assert_allclose(o[:, 1], (h(2 * x) * h(2 * x) + h(1)).astype(np.float32), rtol=1e-3)
    np.testing.assert_allclose(o[:, 2], 3 * x, rtol=1e-2)
    assert res.findings == []


# ---- atomics under contention ------------------------------------------------------------------

ATOMICS = r'''
extern "C" __global__ void atomics(int* counter, float* fsum, unsigned* mx, int* cas_slot, int* cas_old, int* hist, int bins) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(counter, 1);
    atomicAdd(fsum, 0.5f);
    atomicMax(mx, (unsigned)(t * 2654435761u) >> 3);
    cas_old[t] = atomicCAS(cas_slot, -1, t);
    atomicAdd(&hist[t % bins], t);
}
'''


def test_atomics_on_one_address_from_every_thread_are_exact():
    g, b, bins = 8, 256, 3
    total = g * b
    outs, res = run(ATOMICS, "atomics", (g, 1, 1), (b, 1, 1),
                    [np.zeros(1, np.int32), np.zeros(1, np.float32), np.zeros(1, np.uint32),
                     np.full(1, -1, np.int32), np.zeros(total, np.int32), np.zeros(bins, np.int32), bins])
    counter, fsum, mx, slot, old, hist = outs
    t = np.arange(total, dtype=np.uint64)
    assert counter[0] == total and fsum[0] == 0.5 * total
    assert mx[0] == ((t * 2654435761) % 2**32 >> 3).max()
    winner = slot[0]
    assert old[winner] == -1 and (old == -1).sum() == 1 and (old[old != -1] == winner).all()
    assert hist.tolist() == [int(t[t % bins == k].sum()) for k in range(bins)]


# ---- warp shuffles -----------------------------------------------------------------------------

SHUFFLE = r'''
extern "C" __global__ void shuffles(const int* x, int* o) {
    int v = x[threadIdx.x];
    o[threadIdx.x * 5 + 0] = __shfl_down_sync(0xffffffff, v, 3);
    o[threadIdx.x * 5 + 1] = __shfl_up_sync(0xffffffff, v, 5, 16);
    o[threadIdx.x * 5 + 2] = __shfl_xor_sync(0xffffffff, v, 9);
    o[threadIdx.x * 5 + 3] = __shfl_sync(0xffffffff, v, 7, 8);
    o[threadIdx.x * 5 + 4] = __ballot_sync(0xffffffff, v & 1) ^ __popc(__activemask());
}
'''


def test_warp_shuffles_ballot_and_activemask():
    x = RNG.integers(-1000, 1000, 64).astype(np.int32)
    (_, o), res = run(SHUFFLE, "shuffles", (1, 1, 1), (64, 1, 1), [x, np.zeros(64 * 5, np.int32)])
    o = o.reshape(64, 5)
    for t in range(64):
        lane, base = t % 32, t - t % 32
        assert o[t, 0] == (x[t + 3] if lane + 3 < 32 else x[t])
        assert o[t, 1] == (x[t - 5] if lane % 16 >= 5 else x[t])
        assert o[t, 2] == x[base + (lane ^ 9)]
        assert o[t, 3] == x[base + (lane // 8) * 8 + 7]
        ballot = sum(1 << k for k in range(32) if x[base + k] & 1)
        assert (int(o[t, 4]) & 0xFFFFFFFF) == ballot ^ 32
    assert res.findings == []


# ---- the scheduler's findings ------------------------------------------------------------------

DIVERGENT = r'''
extern "C" __global__ void divergent(float* x) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    if (threadIdx.x < 16) {
        s[threadIdx.x] *= 2.0f;
        __syncthreads();  // MARK-A
        x[threadIdx.x] = s[threadIdx.x + 16];
    } else {
        s[threadIdx.x] += 1.0f;
        __syncthreads();  // MARK-B
        x[threadIdx.x] = s[threadIdx.x - 16];
    }
}
'''


def test_divergent_barrier_is_reported_with_its_line():
    _, res = run(DIVERGENT, "divergent", (1, 1, 1), (64, 1, 1), [np.ones(64, np.float32)])
    found = [f for f in res.findings if f.kind == "divergent-barrier"]
    assert found, res.findings
    lines = {line_of(DIVERGENT, "MARK-A"), line_of(DIVERGENT, "MARK-B")}
    assert found[0].line in lines and found[0].file == "kernel.cu"


EARLY_EXIT = r'''
extern "C" __global__ void early(float* x, int n) {
    __shared__ float s[64];
    int i = threadIdx.x;
    if (i >= n) return;
    s[i] = x[i];
    __syncthreads();  // MARK
    x[i] = s[n - 1 - i];
}
'''


def test_barrier_after_exit_is_a_warning_and_the_barrier_completes():
    (x,), res = run(EARLY_EXIT, "early", (1, 1, 1), (64, 1, 1), [np.arange(64, dtype=np.float32), 40])
    assert kinds(res) == ["barrier-after-exit"]
    assert res.findings[0].line == line_of(EARLY_EXIT, "MARK") and res.findings[0].severity == "warning"
    np.testing.assert_array_equal(x[:40], np.arange(40)[::-1])


DEADLOCK = r'''
extern "C" __global__ void stuck(int* x) {
    int v = x[threadIdx.x];
    if (threadIdx.x < 16) {
        v = __shfl_sync(0xffffffff, v, 0);  // MARK
    }
    x[threadIdx.x] = v;
}
'''


def test_shfl_with_a_mask_naming_lanes_that_never_arrive_is_a_deadlock():
    _, res = run(DEADLOCK, "stuck", (1, 1, 1), (32, 1, 1), [np.arange(32, dtype=np.int32)])
    assert res.stopped
    dl = [f for f in res.findings if f.kind == "deadlock"]
    assert dl and dl[0].line == line_of(DEADLOCK, "MARK")
    assert "warp 0" in dl[0].detail and "0x0000ffff" in dl[0].detail


HANG = r'''
extern "C" __global__ void hang(volatile int* flag) {
    while (*flag == 0) { }  // MARK
}
'''


def test_an_endless_loop_is_stopped_by_the_watchdog():
    _, res = run(HANG, "hang", (2, 1, 1), (32, 1, 1), [np.zeros(1, np.int32)], instruction_budget=20_000)
    assert res.stopped and kinds(res) == ["watchdog"]
    assert res.findings[0].line == line_of(HANG, "MARK")


SPIN = r'''
extern "C" __global__ void spin(volatile int* flag, int* out) {
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) {
            while (flag[0] == 0) { }        // block 0 waits for the last block
            out[0] = flag[0] + 1;
        }
    } else if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
        __threadfence();
        flag[0] = 41;
    }
}
'''


def test_spin_wait_on_a_flag_another_block_sets_makes_progress():
    (flag, out), res = run(SPIN, "spin", (4, 1, 1), (64, 1, 1), [np.zeros(1, np.int32), np.zeros(1, np.int32)])
    assert not res.stopped and res.findings == []
    assert out[0] == 42


OOB = r'''
extern "C" __global__ void oob(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i] * 2.0f;  // MARK: no bounds check
}
'''


def test_out_of_bounds_global_access_is_a_finding_with_line_block_thread_and_address():
    n = 100
    (x, y), res = run(OOB, "oob", (1, 1, 1), (256, 1, 1), [np.ones(n, np.float32), np.zeros(n, np.float32), n])
    assert kinds(res) == ["out-of-bounds"]
    f = res.findings[0]
    assert f.line == line_of(OOB, "MARK") and f.space == "global" and f.block == (0, 0, 0)
    assert f.thread[0] >= 100 and f.count >= 156 and f.address is not None
    np.testing.assert_array_equal(y, 2.0)  # the good lanes still ran; bad stores were dropped


MISALIGNED = r'''
extern "C" __global__ void mis(const char* x, float* y) {
    const float4* p = reinterpret_cast<const float4*>(x + 4);
    float4 v = p[threadIdx.x];  // MARK
    y[threadIdx.x] = v.x + v.y + v.z + v.w;
}
'''


def test_misaligned_vector_load_is_a_finding():
    _, res = run(MISALIGNED, "mis", (1, 1, 1), (4, 1, 1), [np.zeros(128, np.uint8), np.zeros(4, np.float32)])
    mis = [f for f in res.findings if f.kind == "misaligned"]
    assert mis and mis[0].line == line_of(MISALIGNED, "MARK")


SHARED_OOB = r'''
extern "C" __global__ void soob(float* y) {
    __shared__ float s[32];
    s[threadIdx.x] = 1.0f;  // MARK
    __syncthreads();
    y[threadIdx.x % 32] = s[threadIdx.x % 32];
}
'''


def test_shared_out_of_bounds_is_reported_in_the_shared_space():
    _, res = run(SHARED_OOB, "soob", (1, 1, 1), (64, 1, 1), [np.zeros(32, np.float32)])
    f = [f for f in res.findings if f.kind == "out-of-bounds"]
    assert f and f[0].space == "shared" and f[0].line == line_of(SHARED_OOB, "MARK")


UNSUPPORTED = r'''
extern "C" __global__ void unsup(unsigned* x) {
    unsigned r;
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(x[0]), "r"(x[1]));  // MARK
    x[2] = r;
}
'''


def test_unsupported_instruction_names_the_opcode_and_line():
    with pytest.raises(UnsupportedPTX) as info:
        run(UNSUPPORTED, "unsup", (1, 1, 1), (1, 1, 1), [np.zeros(4, np.uint32)])
    assert info.value.opcode == "add.cc.u32" and info.value.line == line_of(UNSUPPORTED, "MARK")
    assert "kernel.cu:" in str(info.value)


# ---- wide instruction coverage -----------------------------------------------------------------

BITS = r'''
extern "C" __global__ void bits(const unsigned* a, const unsigned* b, unsigned* o) {
    int i = threadIdx.x;
    unsigned x = a[i], y = b[i];
    unsigned r;
    o[i * 12 + 0] = __byte_perm(x, y, 0x5140);
    o[i * 12 + 1] = __funnelshift_l(x, y, y & 63);
    o[i * 12 + 2] = __funnelshift_r(x, y, y & 31);
    o[i * 12 + 3] = __brev(x);
    o[i * 12 + 4] = __clz(x) + 64 * __ffs(y);
    o[i * 12 + 5] = __popcll(((unsigned long long)x << 32) | y);
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y & 31), "r"((y >> 5) & 31));
    o[i * 12 + 6] = r;
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y & 31), "r"((y >> 5) & 31));
    o[i * 12 + 7] = r;
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(x), "r"(y), "r"(y & 31), "r"((y >> 5) & 31));
    o[i * 12 + 8] = r;
    o[i * 12 + 9] = (x & y) | (~x & (y ^ 0x5a5a5a5a));  // NVRTC turns this into lop3
    o[i * 12 + 10] = __usad(x, y, 7u);
    o[i * 12 + 11] = __umulhi(x, y) ^ (unsigned)__mul64hi((long long)(int)x, (long long)(int)y);
}
'''


def _bfe(x, pos, ln, signed):
    if ln == 0:
        return 0
    take = min(ln, 32 - pos) if pos < 32 else 0
    r = (x >> pos) & ((1 << take) - 1) if take else 0
    if signed:
        sbit = (x >> min(pos + ln - 1, 31)) & 1
        if sbit:
            r |= ~((1 << take) - 1) & 0xFFFFFFFF
    return r


def test_bit_manipulation_intrinsics():
    n = 64
    a = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    a[0], b[0] = 0, 0
    a[1], b[1] = 0xFFFFFFFF, 0x80000000
    (_, _, o), res = run(BITS, "bits", (1, 1, 1), (n, 1, 1), [a, b, np.zeros(n * 12, np.uint32)])
    o = o.reshape(n, 12).astype(np.int64)
    M = 0xFFFFFFFF
    for k in range(n):
        x, y = int(a[k]), int(b[k])
        pair = (y << 32) | x
        sel = [(0x5140 >> (4 * j)) & 7 for j in range(4)]
        assert o[k, 0] == sum(((pair >> (8 * s)) & 0xFF) << (8 * j) for j, s in enumerate(sel))
        sh = y & 31  # __funnelshift_l wraps the shift (the _lc form clamps)
        assert o[k, 1] == ((pair << sh) >> 32) & M
        assert o[k, 2] == (pair >> (y & 31)) & M
        assert o[k, 3] == int(f"{x:032b}"[::-1], 2)
        ffs = (y & -y).bit_length()
        assert o[k, 4] == (32 - x.bit_length()) + 64 * ffs
        assert o[k, 5] == bin(pair).count("1")
        pos, ln = y & 31, (y >> 5) & 31
        assert o[k, 6] == _bfe(x, pos, ln, False)
        assert o[k, 7] == _bfe(x, pos, ln, True)
        ln2 = min(ln, 32 - pos)
        field = ((1 << ln2) - 1) << pos
        assert o[k, 8] == (y & ~field & M) | ((x << pos) & field)
        assert o[k, 9] == (x & y) | (~x & (y ^ 0x5A5A5A5A)) & M
        assert o[k, 10] == (abs(x - y) + 7) & M
        sx, sy = x - (x >> 31 << 32), y - (y >> 31 << 32)
        assert o[k, 11] == ((x * y) >> 32) ^ (((sx * sy) >> 64) & M)
    assert res.findings == []


ATOMIC_KINDS = r'''
extern "C" __global__ void kinds_(int* g, unsigned* u, float* f) {
    __shared__ int s[4];
    int t = threadIdx.x;
    if (t < 4) s[t] = 0;
    __syncthreads();
    atomicExch(&g[0], t);                 // the last in some serial order
    atomicMin(&g[1], 1000 - t);
    atomicAnd(&g[2], ~(1 << (t % 31)));
    atomicOr(&g[3], 1 << (t % 31));
    atomicXor(&g[4], t);
    atomicInc(&u[0], 9u);
    atomicDec(&u[1], 9u);
    atomicAdd(&s[t % 4], t);
    atomicMax(&s[3], t);
    atomicAdd(&f[0], 1.0f);
    __syncthreads();
    if (t < 4) g[5 + t] = s[t];
}
'''


def test_every_atomic_kind_on_global_and_shared_memory():
    n = 96
    g = np.array([-1, 10**6, -1, 0, 0, 0, 0, 0, 0], np.int32)
    (g, u, f), res = run(ATOMIC_KINDS, "kinds_", (1, 1, 1), (n, 1, 1),
                         [g, np.zeros(2, np.uint32), np.zeros(1, np.float32)])
    t = np.arange(n)
    assert 0 <= g[0] < n and g[1] == 1000 - (n - 1)
    assert g[2] == ~int(np.bitwise_or.reduce(1 << (t % 31))) and g[3] == int(np.bitwise_or.reduce(1 << (t % 31)))
    assert g[4] == int(np.bitwise_xor.reduce(t))
    inc, dec = 0, 0
    for _ in range(n):
        inc = 0 if inc >= 9 else inc + 1
        dec = 9 if dec == 0 or dec > 9 else dec - 1
    assert u.tolist() == [inc, dec] and f[0] == n
    assert g[5:8].tolist() == [int(t[t % 4 == k].sum()) for k in range(3)]
    assert g[8] == max(int(t[t % 4 == 3].sum()), n - 1) or g[8] >= n - 1
    assert res.findings == []


WARP_MISC = r'''
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void warpmisc(const int* x, int* o) {
    int t = threadIdx.x, v = x[t];
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    o[t * 6 + 0] = cg::reduce(warp, v, cg::plus<int>());
    o[t * 6 + 1] = __reduce_max_sync(0xffffffff, v);
    o[t * 6 + 2] = __match_any_sync(0xffffffff, v & 3);
    o[t * 6 + 3] = __all_sync(0xffffffff, v > -1000) + 2 * __any_sync(0xffffffff, v > 990);
    int w = v;
    if (t & 1) w += 1;
    __syncwarp();
    o[t * 6 + 4] = __shfl_sync(0x55555555, w, 2, 4);
    long long c0 = clock64();
    o[t * 6 + 5] = clock64() > c0;
}
'''


def test_cooperative_groups_redux_match_vote_syncwarp_and_clock():
    x = RNG.integers(-999, 999, 64).astype(np.int32)
    (_, o), res = run(WARP_MISC, "warpmisc", (1, 1, 1), (64, 1, 1), [x, np.zeros(64 * 6, np.int32)])
    o = o.reshape(64, 6)
    for t in range(64):
        w = x[t - t % 32: t - t % 32 + 32]
        lane = t % 32
        assert o[t, 0] == w.sum() and o[t, 1] == w.max()
        assert (int(o[t, 2]) & 0xFFFFFFFF) == sum(1 << k for k in range(32) if (w[k] & 3) == (w[lane] & 3))
        assert o[t, 3] == 1 + 2 * int((w > 990).any())
        if lane % 2 == 0:
            src = t - lane % 4 + 2
            assert o[t, 4] == x[src] + (src & 1)
        assert o[t, 5] == 1
    assert res.findings == []


ROUNDING = r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void rounding(const float* a, const float* b, float* o, double* d) {
    int i = threadIdx.x;
    float x = a[i], y = b[i];
    o[i * 8 + 0] = __fadd_rz(x, y);
    o[i * 8 + 1] = __fmul_rd(x, y);
    o[i * 8 + 2] = __fmul_ru(x, y);
    o[i * 8 + 3] = __fmaf_rn(x, y, 1.0f);
    o[i * 8 + 4] = __half2float(__float2half_rz(x));
    o[i * 8 + 5] = __bfloat162float(__float2bfloat16_rn(x));
    o[i * 8 + 6] = __fdiv_rn(x, y) + __frcp_rn(y) * 0.0f;
    o[i * 8 + 7] = __fsqrt_rn(fabsf(x));
    d[i] = (double)x * y + __dsqrt_rn(fabs((double)y));
}
'''


def test_float_rounding_modes_and_conversions():
    n = 64
    a = RNG.standard_normal(n).astype(np.float32) * 100
    b = RNG.standard_normal(n).astype(np.float32)
    (_, _, o, d), res = run(ROUNDING, "rounding", (1, 1, 1), (n, 1, 1),
                            [a, b, np.zeros(n * 8, np.float32), np.zeros(n, np.float64)])
    o = o.reshape(n, 8)
    x, y = a.astype(np.float64), b.astype(np.float64)
    exact_sum, exact_prod = x + y, x * y
    assert (np.abs(o[:, 0].astype(np.float64)) <= np.abs(exact_sum)).all()
    assert (o[:, 1] <= exact_prod).all() and (o[:, 2] >= exact_prod).all()
    np.testing.assert_array_equal(o[:, 3], (exact_prod + 1).astype(np.float32))
    assert (np.abs(o[:, 4]) <= np.abs(a)).all()
    np.testing.assert_allclose(o[:, 5], a, rtol=2 ** -8)
    np.testing.assert_array_equal(o[:, 6], (a / b).astype(np.float32))
    np.testing.assert_array_equal(o[:, 7], np.sqrt(np.abs(a)))
    np.testing.assert_allclose(d, x * y + np.sqrt(np.abs(y)), rtol=1e-15)
    assert res.findings == []


SYNC_REDUCE = r'''
extern "C" __global__ void syncred(const int* x, int* o) {
    int v = x[blockIdx.x * blockDim.x + threadIdx.x];
    int c = __syncthreads_count(v > 0);
    int a = __syncthreads_and(v > -5);
    int r = __syncthreads_or(v > 100);
    o[blockIdx.x * blockDim.x + threadIdx.x] = c + 1000 * a + 10000 * r;
}
'''


def test_syncthreads_count_and_or_reduce_over_each_block():
    x = RNG.integers(-10, 120, 3 * 96).astype(np.int32)
    (_, o), res = run(SYNC_REDUCE, "syncred", (3, 1, 1), (96, 1, 1), [x, np.zeros(3 * 96, np.int32)])
    for b in range(3):
        v = x[b * 96:(b + 1) * 96]
        want = (v > 0).sum() + 1000 * int((v > -5).all()) + 10000 * int((v > 100).any())
        assert (o[b * 96:(b + 1) * 96] == want).all()
    assert res.findings == []

"""How fast the CPU emulator runs interview-sized kernels, and how it compares with numba's
CUDA simulator running the same algorithm.

    python lab/emulator_bench.py                       # print the table
    python lab/emulator_bench.py --write lab/results/emulator.md

Times are wall-clock seconds of `Emulator.launch` alone (the PTX is compiled and loaded, and the
inputs uploaded, before the clock starts), the median of --repeats runs. Each result is checked
against numpy so a fast wrong answer cannot look good. The numba side runs in a subprocess with
NUMBA_ENABLE_CUDASIM=1; its simulator has no warp shuffles, so there the shuffle steps exchange
values through a per-warp shared buffer, which is how the simulator can express the same tree.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REDUCE_TREE = r"""
extern "C" __global__ void reduce(const float* x, float* out, int n) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, s[0]);
}
"""

MATMUL = r"""
#define TILE 16
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        int ka = t * TILE + threadIdx.x, kb = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
"""

REDUCE_SHUFFLE = r"""
extern "C" __global__ void reduce(const float* x, float* out, int n) {
    __shared__ float warp_sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
        if (lane == 0) atomicAdd(out, v);
    }
}
"""

NUMBA_WORKER = r"""
import sys, time, json
import numpy as np
from numba import cuda, float32

@cuda.jit
def reduce(x, out, n):
    # The simulator has no shfl_down_sync: each shuffle step goes through a per-warp buffer.
    buf = cuda.shared.array(256, float32)
    warp_sums = cuda.shared.array(32, float32)
    tid = cuda.threadIdx.x
    lane, warp = tid % 32, tid // 32
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    v = x[i] if i < n else float32(0.0)
    off = 16
    while off > 0:
        buf[tid] = v
        cuda.syncthreads()
        if lane + off < 32:
            v += buf[tid + off]
        cuda.syncthreads()
        off //= 2
    if lane == 0:
        warp_sums[warp] = v
    cuda.syncthreads()
    v = warp_sums[lane] if (warp == 0 and lane < cuda.blockDim.x // 32) else float32(0.0)
    off = 16
    while off > 0:
        buf[tid] = v
        cuda.syncthreads()
        if lane + off < 32:
            v += buf[tid + off]
        cuda.syncthreads()
        off //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, v)

n = int(sys.argv[1])
x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
out = np.zeros(1, np.float32)
t0 = time.perf_counter()
reduce[(n + 255) // 256, 256](x, out, n)
dt = time.perf_counter() - t0
print(json.dumps({"n": n, "seconds": dt, "ok": bool(abs(out[0] - x.sum(dtype=np.float64)) < 1e-3 * np.abs(x).sum())}))
"""


def _module(emu, src: str):
    from harness.frontends.nvrtc import compile

    r = compile(src, filename="bench.cu")
    if not r.ok:
        raise SystemExit(r.log)
    return emu.load(r.ptx, filename="bench.cu")


def _median_launch(emu, mod, name, grid, block, args, repeats, before=None):
    times, res = [], None
    for _ in range(repeats):
        if before:
            before()
        t0 = time.perf_counter()
        res = emu.launch(mod, name, grid=grid, block=block, shared_bytes=0, args=args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), res


def bench_reduce(n: int, repeats: int, on: bool, src: str = REDUCE_TREE) -> dict:
    from harness.emulator import Emulator

    emu = Emulator(sanitize=on, counters=on)
    mod = _module(emu, src)
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    px, out = emu.alloc(x.nbytes), emu.alloc(4)
    emu.write(px, x)
    zero = lambda: emu.memset(out, 0, 4)  # noqa: E731
    t, res = _median_launch(emu, mod, "reduce", ((n + 255) // 256, 1, 1), (256, 1, 1), [px, out, n],
                            repeats, before=zero)
    got = float(emu.read(out, np.float32, 1)[0])
    ok = abs(got - x.sum(dtype=np.float64)) <= 1e-5 * np.abs(x).sum()
    return {"seconds": t, "ok": ok, "findings": len(res.findings)}


def bench_matmul(m: int, repeats: int, on: bool) -> dict:
    from harness.emulator import Emulator

    emu = Emulator(sanitize=on, counters=on)
    mod = _module(emu, MATMUL)
    rng = np.random.default_rng(2)
    A, B = (rng.standard_normal((m, m)).astype(np.float32) for _ in range(2))
    pa, pb, pc = emu.alloc(A.nbytes), emu.alloc(B.nbytes), emu.alloc(A.nbytes)
    emu.write(pa, A)
    emu.write(pb, B)
    t, res = _median_launch(emu, mod, "matmul", (m // 16, m // 16, 1), (16, 16, 1), [pa, pb, pc, m, m, m],
                            repeats)
    C = emu.read(pc, np.float32, m * m).reshape(m, m)
    ok = bool(np.allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-3))
    return {"seconds": t, "ok": ok, "findings": len(res.findings)}


def numba_sim(n: int, timeout: float) -> dict | None:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    try:
        out = subprocess.run([sys.executable, "-c", NUMBA_WORKER, str(n)], env=env, capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        raise SystemExit(f"numba simulator failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_vs_numba(limit_s: float, repeats: int) -> dict:
    """The largest power-of-two size the simulator finishes within limit_s, then the emulator."""
    best, n = None, 256
    while True:
        r = numba_sim(n, timeout=limit_s)
        if r is None:
            break
        best = r
        if r["seconds"] * 2.2 > limit_s:  # the next size (2x) would not finish in time
            break
        n *= 2
    if best is None:
        raise SystemExit("numba's simulator did not finish even the smallest size")
    emu = bench_reduce(best["n"], repeats, on=False, src=REDUCE_SHUFFLE)
    return {"n": best["n"], "numba_seconds": best["seconds"], "numba_ok": best["ok"],
            "emulator_seconds": emu["seconds"], "emulator_ok": emu["ok"],
            "ratio": best["seconds"] / emu["seconds"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--numba-limit", type=float, default=60.0, help="seconds the simulator may take")
    ap.add_argument("--skip-numba", action="store_true")
    ap.add_argument("--write", type=Path, help="write the markdown results here")
    a = ap.parse_args()

    load_before = os.getloadavg()[0]
    rows = []
    n = 1 << 22
    for on, goal in ((False, 1.0), (True, 3.0)):
        r = bench_reduce(n, a.repeats, on)
        rows.append((f"tree reduction, 2^22 floats, 256-thread blocks, sanitizer+counters {'on' if on else 'off'}",
                     r["seconds"], goal, r["ok"]))
        print(rows[-1], flush=True)
    for on in (False, True):
        r = bench_matmul(256, a.repeats, on)
        rows.append((f"tiled matmul 256x256x256 (16x16 tiles), sanitizer+counters {'on' if on else 'off'}",
                     r["seconds"], 1.0 if not on else None, r["ok"]))
        print(rows[-1], flush=True)
    cmp = None if a.skip_numba else bench_vs_numba(a.numba_limit, a.repeats)
    print(cmp, flush=True)
    load = (load_before, os.getloadavg()[0])
    text = render(rows, cmp, " ".join(["python"] + sys.argv), load)
    print(text)
    if a.write:
        # Hand-written sections (history, profiles) start at "## History" and are kept.
        old = a.write.read_text() if a.write.exists() else ""
        keep = old[old.index("\n## History"):] if "\n## History" in old else ""
        a.write.write_text(text.rstrip("\n") + "\n" + keep)


def render(rows, cmp, command: str, load: tuple[float, float]) -> str:
    lines = ["# Emulator benchmark", "",
             f"- command: `{command}`",
             f"- date: {datetime.date.today().isoformat()}",
             "- machine: 2-core CI-like machine",
             f"- numpy {np.__version__}, Python {sys.version.split()[0]}",
             f"- 1-minute load average at start / end: {load[0]:.1f} / {load[1]:.1f} (the machine is "
             "shared: above 2 the numbers are inflated)", "",
             "| workload | seconds (median) | goal | met | answer checked |", "|---|---|---|---|---|"]
    for name, sec, goal, ok in rows:
        met = "" if goal is None else ("yes" if sec <= goal else "**no**")
        lines.append(f"| {name} | {sec:.3f} | {'' if goal is None else f'<= {goal:g} s'} | {met} | "
                     f"{'ok' if ok else '**WRONG**'} |")
    if cmp:
        lines += ["", "## Warp-shuffle reduction vs numba's CUDA simulator", "",
                  f"Largest power-of-two size the simulator finished within the limit: n = {cmp['n']}.", "",
                  "| machine | seconds | answer checked |", "|---|---|---|",
                  f"| numba CUDA simulator (NUMBA_ENABLE_CUDASIM=1) | {cmp['numba_seconds']:.2f} | "
                  f"{'ok' if cmp['numba_ok'] else 'WRONG'} |",
                  f"| kata emulator (sanitizer and counters off) | {cmp['emulator_seconds']:.4f} | "
                  f"{'ok' if cmp['emulator_ok'] else 'WRONG'} |", "",
                  f"Speed ratio: **{cmp['ratio']:.0f}x** (goal >= 1000x: "
                  f"{'met' if cmp['ratio'] >= 1000 else 'missed'})."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()

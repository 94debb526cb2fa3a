"""Calibration of the H200 model's Hopper terms: time lab/model/hopper/rates.cu on the GPU.

    python3 lab/model/hopper/rates.py [--out FILE.json]     # on the GPU machine, ~15 s
    python lab/model/hopper/rates.py --backend cpu           # no GPU: each kernel once at a tiny
                                                             # size on the emulator, sanitizer on

Prints, and writes as JSON, the sustained wgmma rate (bf16 m64n256k16 and e4m3 m64n256k32, two
warpgroups on every SM, one group in flight) and the tensor copy engine's rate from DRAM (a 512 MB
tensor read once, after the L2 flush) and from L2 (a 4 MB tensor read again and again). The model
compares them with grader/performance/model/h200.py's TENSOR_SUSTAINED and, for TMA traffic, its L2
and DRAM rates (fitted.json). Measured on the H200 (2026-12-02, lab/results/2026-12-02-h200-session4.md):
wgmma 893 bf16 / 1785 e4m3 TFLOP/s (90 % of peak, no operand traffic: GEMMs that stream operands
run at 712-774, so the model keeps cuBLAS's 718), TMA 4.4 TB/s from DRAM (the streaming read's
rate, which the model already uses) and 8.9 TB/s from L2.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

BOX_BYTES = 256 * 128  # a tma_rate box: 256 rows of 64 bf16
SHARED_WGMMA = 49152 + 1024
SHARED_TMA = 4 * BOX_BYTES + 1024


def _cases(gpu: bool, sms: int) -> list[dict]:
    """What to run: (kind, grid, arguments, work) at the timing size, or a tiny one for the emulator."""
    iters = 4000 if gpu else 2
    flops = lambda k: 2 * iters * 4 * 2 * 64 * 256 * k  # noqa: E731  (per block: 2 warpgroups, 4 wgmmas an iteration)
    dram_rows, l2_rows = (1 << 22, 1 << 15) if gpu else (1 << 10, 1 << 9)
    dram_boxes = -(-(dram_rows // 256) // sms) if gpu else 3
    l2_boxes = 2000 if gpu else 6
    blocks = sms if gpu else 2
    return [
        {"name": "wgmma bf16 m64n256k16", "kernel": "wgmma_rate", "grid": blocks, "args": (iters, 0),
         "flops": blocks * flops(16)},
        {"name": "wgmma e4m3 m64n256k32", "kernel": "wgmma_rate", "grid": blocks, "args": (iters, 1),
         "flops": blocks * flops(32)},
        {"name": "TMA from DRAM (512 MB once)" if gpu else "TMA from DRAM", "kernel": "tma_rate", "grid": blocks,
         "rows": dram_rows, "boxes": dram_boxes, "bytes": blocks * dram_boxes * BOX_BYTES, "flush": True},
        {"name": "TMA from L2 (4 MB again and again)" if gpu else "TMA from L2", "kernel": "tma_rate",
         "grid": blocks, "rows": l2_rows, "boxes": l2_boxes, "bytes": blocks * l2_boxes * BOX_BYTES, "flush": False},
    ]


def main() -> int:
    from harness.backends.plan import Plan
    from harness.frontends.nvrtc import compile

    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    gpu = args.backend == "gpu"
    src = (Path(__file__).with_name("rates.cu")).read_text()
    r = compile(src, "rates.cu", cubin=gpu)
    if not r.ok:
        print(r.log)
        return 1
    if gpu:
        from harness.backends.gpu import GpuBackend
        from harness.measure import timing

        backend = GpuBackend()
        policy = timing.TimingPolicy()
        flush = timing.L2Flush(policy.flush_bytes, policy.flush_mode)
    else:
        from harness.backends.cpu import CpuBackend

        backend = CpuBackend(sanitize=True)
    backend.load(r.ptx, r.cubin, "rates.cu")
    plan = Plan(backend, __file__)
    sms = backend.facts.sm_count
    rows = []
    for c in _cases(gpu, sms):
        if c["kernel"] == "wgmma_rate":
            out = plan.zeros(c["grid"] * 256, "float32")
            run = lambda c=c, out=out: plan.launch("wgmma_rate", grid=c["grid"], block=256,  # noqa: E731
                                                   args=(out, *c["args"]), shared=SHARED_WGMMA)
        else:
            tensor = plan.zeros(c["rows"] * 64, "uint16")
            tmap = plan.tensor_map(tensor, global_dim=(64, c["rows"]), global_strides=(128,), box_dim=(64, 256),
                                   swizzle="128B", dtype="bfloat16")
            out = plan.zeros(c["grid"], "float32")
            run = lambda c=c, tmap=tmap, out=out: plan.launch("tma_rate", grid=c["grid"], block=64,  # noqa: E731
                                                              args=(tmap, out, c["rows"] // 256, c["boxes"]),
                                                              shared=SHARED_TMA)
        if not gpu:
            run()
            found = sorted({f.kind for f in backend.findings})
            print(f"{c['name']}: ran on the emulator, findings: {', '.join(found) or 'none'}")
            rows.append({"name": c["name"], "findings": found})
            continue
        res = timing.measure(run, backend.stream, policy=policy, flush=flush if c.get("flush") else None)
        t = res.stats.median
        rate = (c["flops"] / t / 1e12, "TFLOP/s") if "flops" in c else (c["bytes"] / t / 1e12, "TB/s")
        print(f"{c['name']}: {t * 1e6:.1f} us median (n={res.stats.n}), {rate[0]:.1f} {rate[1]}", flush=True)
        rows.append({"name": c["name"], "median_s": t, "rate": rate[0], "unit": rate[1], "n": res.stats.n,
                     "flags": list(getattr(res, "flags", ()) or ())})
    if args.out:
        args.out.write_text(json.dumps({"gpu": backend.facts.name, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

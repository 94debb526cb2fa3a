"""What the L2 flush before a sample costs the kernel timed after it (harness/measure/timing.py,
point 2): a streaming read and a copy of 8.7 MB to 1 GiB, timed after each L2Flush mode.

    python3 lab/flush_probe.py [--out FILE]

The memset flush ("write", the method before 2026-12-02) leaves the L2 full of dirty lines; a
read flush leaves it clean. When the dirty lines are written back inside the timed kernel, the
"write" rows are slower by up to ~L2-size / bandwidth (60 MB at 4.3 TB/s is 14 us), most at the
sizes that fit in or near the L2. Prints one row per (kernel, size, mode): median, bytes / median.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = (8_683_520, 30_392_320, 117_899_264, 1 << 30)  # qgemv's three bench shapes' bytes, then 1 GiB


def main() -> int:
    import numpy as np

    from harness.backends.gpu import GpuBackend
    from harness.measure import calibrate, timing

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    backend = GpuBackend()
    calibrate._probes(backend)
    rows = ["| kernel | MB | flush | median | GB/s (bytes moved / median) |", "|---|---|---|---|---|"]
    flushes = {m: timing.L2Flush(1 << 30, m) for m in timing.L2Flush.MODES}
    for nbytes in SIZES:
        x = backend.alloc(nbytes // 4, np.float32)
        y = backend.alloc(nbytes // 4, np.float32)
        out = backend.alloc(1, np.float32)
        backend.memset(x, 0x3F)
        blocks = backend.facts.sm_count * 8
        kernels = {
            "read": (lambda: backend.launch("read_probe", (blocks, 1, 1), (256, 1, 1), 0,
                                            [x, out, np.int64(x.size // 4)]), nbytes),
            "copy": (lambda: backend.copy(y, x), 2 * nbytes),
        }
        for name, (run, moved) in kernels.items():
            for mode, flush in flushes.items():
                r = timing.measure(run, backend.stream, flush=flush)
                med = r.stats.median
                rows.append(f"| {name} | {nbytes / 1e6:.1f} | {mode} | {timing.fmt_time(med)} | {moved / med / 1e9:.0f} |")
                print(rows[-1], flush=True)
        x = y = out = None
    if args.out:
        args.out.write_text("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

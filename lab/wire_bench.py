"""The worker's reply with a bench case's outputs: through the message, and through the spill folder.

    python lab/wire_bench.py [--mib 256] [--arrays 3]

Three float32 arrays of 256 MiB (a transpose case's checked output and both rotation sets' after
timing), packed (harness/sandbox/wire.py), sent over a multiprocessing pipe and unpacked, each way.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import threading
import time

import numpy as np

from harness.sandbox import wire


def once(arrays, spill):
    t0 = time.perf_counter()
    msg = wire.pack({"outputs": arrays}, spill)
    t1 = time.perf_counter()
    r, w = mp.Pipe(False)
    sender = threading.Thread(target=w.send_bytes, args=(msg,))
    sender.start()
    got = r.recv_bytes()
    sender.join()
    t2 = time.perf_counter()
    back = wire.unpack(got, spill)["outputs"]
    t3 = time.perf_counter()
    assert all((a == b).all() for a, b in zip(arrays, back))
    return t1 - t0, t2 - t1, t3 - t2, len(msg)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--arrays", type=int, default=3)
    args = ap.parse_args()
    n = args.mib << 18
    arrays = [np.random.default_rng(i).random(n, dtype=np.float32) for i in range(args.arrays)]
    print(f"{args.arrays} arrays of {args.mib} MiB")
    for label, spill in (("message", None), ("spill folder", tempfile.mkdtemp(prefix="kata-wire-bench-"))):
        p, s, u, size = once(arrays, spill)
        print(f"{label:13s} pack {p:5.2f} s  pipe {s:5.2f} s  unpack {u:5.2f} s  total {p + s + u:5.2f} s  "
              f"message {size:,} bytes")


if __name__ == "__main__":
    main()

"""Integer atomic adds where a few lanes share an address (a histogram's shape) go through one
prefix sum per address (ops_atom.serial): each lane's old value is what the documented serial
order (by address, then lane) gives it, and the totals wrap like the hardware's."""
from __future__ import annotations

import numpy as np
import pytest

from harness.emulator import Emulator
from harness.frontends.nvrtc import compile

SRC = r"""
extern "C" __global__ void k(const unsigned* v, unsigned* gbins, unsigned* gold, int* sbins_out, int* sold,
                             int nbins) {
    __shared__ int s[16];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (t < 16) s[t] = -5 * t;
    __syncthreads();
    gold[i] = atomicAdd(&gbins[i % nbins], v[i]);
    sold[i] = atomicAdd(&s[t % nbins], (int)v[i]);
    __syncthreads();
    if (t < 16) sbins_out[blockIdx.x * 16 + t] = s[t];
}
"""


def _serial(init, keys, vals, dtype):
    """Old values and totals of adds applied lane by lane in (key, lane) order, modulo 2**32."""
    acc = [int(x) for x in np.asarray(init, dtype).view(np.uint32)]
    old = np.zeros(keys.size, np.uint32)
    bits = np.asarray(vals, dtype).view(np.uint32)
    for lane in np.argsort(keys, kind="stable").tolist():
        old[lane] = acc[keys[lane]]
        acc[keys[lane]] = (acc[keys[lane]] + int(bits[lane])) % (1 << 32)
    return old.view(dtype), np.array(acc, np.uint32).view(dtype)


@pytest.mark.parametrize("nbins", [7, 1])  # ~9 lanes per address, and one address for all (heavy)
def test_integer_atomic_adds_on_shared_addresses_follow_the_serial_order(nbins):
    r = compile(SRC, "kernel.cu")
    assert r.ok, r.log
    blocks, threads = 3, 64
    n = blocks * threads
    rng = np.random.default_rng(nbins)
    v = (np.uint32(0xFFFFFFF0) + rng.integers(0, 64, n).astype(np.uint32)).astype(np.uint32)  # wraps
    emu = Emulator(sanitize=True)
    mod = emu.load(r.ptx, "kernel.cu")
    arrays = [v, np.zeros(nbins, np.uint32), np.zeros(n, np.uint32), np.zeros(blocks * 16, np.int32),
              np.zeros(n, np.int32)]
    ptrs = []
    for a in arrays:
        p = emu.alloc(a.nbytes)
        emu.write(p, a)
        ptrs.append(p)
    res = emu.launch(mod, "k", grid=(blocks, 1, 1), block=(threads, 1, 1), args=ptrs + [nbins])
    assert not res.findings, res.findings
    gbins, gold = emu.read(ptrs[1], np.uint32, nbins), emu.read(ptrs[2], np.uint32, n)
    lanes = np.arange(n)
    want_old, want_bins = _serial(np.zeros(nbins), lanes % nbins, v, np.uint32)
    assert np.array_equal(gold, want_old) and np.array_equal(gbins, want_bins)
    sbins, sold = emu.read(ptrs[3], np.int32, blocks * 16), emu.read(ptrs[4], np.int32, n)
    for b in range(blocks):
        part = slice(b * threads, (b + 1) * threads)
        init = (-5 * np.arange(16)).astype(np.int32)[:nbins]
        want_old, want_bins = _serial(init, np.arange(threads) % nbins, v[part].view(np.int32), np.int32)
        assert np.array_equal(sold[part], want_old)
        assert np.array_equal(sbins[b * 16:b * 16 + nbins], want_bins)

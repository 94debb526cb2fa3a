"""The counters' per-warp cost of one access (counters.py): 32-byte sectors of a global access,
bank wavefronts of a shared one, from the lanes' addresses. Key helpers in numpy, and the per-warp
pass in numba when it is installed (the numpy path in counters.py gives the same numbers)."""
from __future__ import annotations

import numpy as np

def _sorted_keys(keys: np.ndarray) -> np.ndarray:
    if keys.size > 1 and (keys[1:] < keys[:-1]).any():
        return np.sort(keys)
    return keys


def _group_sizes(keys: np.ndarray) -> np.ndarray:
    """How many entries each distinct key has (order of keys is irrelevant)."""
    k = _sorted_keys(keys)
    if k.size == 0:
        return np.zeros(0, np.int64)
    edges = np.flatnonzero(k[1:] != k[:-1]) + 1
    return np.diff(np.concatenate(([0], edges, [k.size])))


def _pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One sortable int64 per (a, b) pair, ordered by a then b."""
    a0, b0 = a.min(), b.min()
    span = int(b.max() - b0) + 1
    if span * (int(a.max() - a0) + 1) < 2**62:
        return (a - a0) * span + (b - b0)
    order = np.lexsort((b, a))  # vast address ranges: rank the pairs instead of packing them
    ranks = np.empty(a.size, np.int64)
    a_s, b_s = a[order], b[order]
    new = np.concatenate(([True], (a_s[1:] != a_s[:-1]) | (b_s[1:] != b_s[:-1])))
    ranks[order] = np.cumsum(new) - 1
    return ranks


def _distinct_per_group(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Distinct values per group, in the order of the sorted groups (as _group_sizes)."""
    order = np.lexsort((values, groups))
    g, v = groups[order], values[order]
    new = np.concatenate(([True], (g[1:] != g[:-1]) | (v[1:] != v[:-1])))
    return _group_sizes(g[new])


def _distinct(keys: np.ndarray) -> int:
    k = _sorted_keys(keys)
    return int(k.size and 1 + np.count_nonzero(k[1:] != k[:-1]))


def _warp_costs(kind, blocks, tids, addrs, size, wpb, out):
    """One pass over lanes that arrive warp by warp (the engine's order): kind 0 counts warp
    requests; 1 adds global sectors and their ideal; 2 shared wavefronts and their ideal.
    out = (requests, sectors or wavefronts, ideal). False when a warp's lanes are not adjacent,
    and the numpy path counts instead."""
    phases = max(1, size // 4) if kind == 2 else 1
    per_phase = 32 // phases
    nw = max(1, (size + 3) // 4)
    table = np.empty((32, 128), np.int64)  # distinct words per bank in the current phase
    cnt = np.zeros(32, np.int64)
    sect = np.empty(64, np.int64)  # distinct sectors of the current warp
    nsect = 0
    seen_addr = np.empty(32, np.int64)  # distinct addresses of the current warp (a broadcast is one)
    naddr = 0
    req = 0
    cost = 0
    ideal = 0
    lanes = 0
    prev_key = -1
    prev_group = -1
    for i in range(tids.shape[0]):
        key = np.int64(blocks[i]) * wpb + np.int64(tids[i]) // 32
        if key < prev_key:
            return False
        group = key * 4 + (np.int64(tids[i]) & 31) // per_phase
        if kind == 2 and group != prev_group and prev_group >= 0:
            cost += cnt.max()
            cnt[:] = 0
        if key != prev_key:
            if prev_key >= 0:
                ideal += max(1, (lanes * size + 127) // 128) if kind == 2 else (naddr * size + 31) // 32
            cost += nsect
            nsect = 0
            naddr = 0
            lanes = 0
            req += 1
        prev_key = key
        prev_group = group
        lanes += 1
        a = addrs[i]
        if kind == 1:
            dup = False
            for j in range(naddr):
                if seen_addr[j] == a:
                    dup = True
                    break
            if not dup and naddr < 32:
                seen_addr[naddr] = a
                naddr += 1
            for sc in range(a >> 5, ((a + size - 1) >> 5) + 1):
                seen = False
                for j in range(nsect):
                    if sect[j] == sc:
                        seen = True
                        break
                if not seen:
                    sect[nsect] = sc
                    nsect += 1
        elif kind == 2:
            for k in range(nw):
                word = (a >> 2) + k
                b = word & 31
                seen = False
                for j in range(cnt[b]):
                    if table[b, j] == word:
                        seen = True
                        break
                if not seen:
                    table[b, cnt[b]] = word
                    cnt[b] += 1
    if prev_key >= 0:
        ideal += max(1, (lanes * size + 127) // 128) if kind == 2 else (naddr * size + 31) // 32
        cost += nsect + (cnt.max() if kind == 2 else 0)
    out[0] = req
    out[1] = cost
    out[2] = ideal
    return True


try:  # numba is optional: the numpy path in counters.py counts the same, slower
    import numba

    _warp_costs = numba.njit(cache=True)(_warp_costs)
except ImportError:
    _warp_costs = None

"""Lane sets of the scheduler: sorted index arrays, indexed as slices when contiguous."""
from __future__ import annotations

import numpy as np

from . import boxes


def sel(idx: np.ndarray):
    n = idx.size
    a = int(idx[0])
    return slice(a, a + n) if int(idx[n - 1]) - a == n - 1 else idx


def merge(a: np.ndarray | None, b: np.ndarray, every: np.ndarray) -> np.ndarray:
    """The union of two sorted, disjoint lane sets; `every` is arange(N)."""
    if a is None or a.size == 0:
        return b
    lo, hi = min(boxes.first(a), boxes.first(b)), max(boxes.last(a), boxes.last(b))
    if a.size + b.size == hi - lo + 1:  # disjoint and filling the range: a view, nothing to sort
        return every[lo:hi + 1]
    a, b = boxes.written(a), boxes.written(b)
    if a[-1] < b[0]:
        return np.concatenate((a, b))
    if b[-1] < a[0]:
        return np.concatenate((b, a))
    n = every.size
    if 8 * (a.size + b.size) > n:  # interleaved and large: mark and collect beats sorting
        mark = np.zeros(n, bool)
        mark[a] = True
        mark[b] = True
        return np.flatnonzero(mark)
    return np.sort(np.concatenate((a, b)), kind="stable")  # two sorted runs: a linear merge

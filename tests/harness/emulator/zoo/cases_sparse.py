"""Sparse and graph kernels: CSR SpMV (scalar, warp per row), BFS with atomicCAS."""
import numpy as np

from _zoo import case, cdiv


def _csr(rng, m, k, kind):
    if kind == "power":
        lens = np.minimum(rng.zipf(1.6, size=m), k * 4)
    elif kind == "dense_row":
        lens = np.zeros(m, np.int64)
        lens[m // 2] = 3 * k
    else:
        lens = rng.integers(0, 9, size=m)  # includes empty rows
    row_ptr = np.concatenate(([0], np.cumsum(lens))).astype(np.int32)
    nnz = int(row_ptr[-1])
    col = rng.integers(0, k, size=nnz).astype(np.int32)  # unsorted, repeats allowed
    val = (rng.standard_normal(nnz) * 2).astype(np.float32)
    x = (rng.standard_normal(k) + 0.25).astype(np.float32)
    return row_ptr, col, val, x


def _spmv_check(dev, size, rng, grid_of, block):
    m, k, kind = size
    row_ptr, col, val, x = _csr(rng, m, k, kind)
    y = dev.empty(m, np.float32)
    args = [m, dev.upload(row_ptr), dev.upload(col), dev.upload(val), dev.upload(x), y]
    dev.launch("spmv", grid_of(m), block, args)
    got = dev.read(y, np.float32, m)
    prod = val.astype(np.float64) * x[col].astype(np.float64)
    rows = np.repeat(np.arange(m), np.diff(row_ptr))
    want = np.bincount(rows, prod, minlength=m)
    scale = np.bincount(rows, np.abs(prod), minlength=m)
    assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-30), np.max(np.abs(got - want))


SPMV = ((1, 5, "uniform"), (77, 40, "uniform"), (300, 100, "power"), (65, 50, "dense_row"))


@case("spmv_scalar", *SPMV)
def spmv_scalar(dev, size, rng):
    _spmv_check(dev, size, rng, lambda m: cdiv(m, 128), 128)


@case("spmv_warp", *SPMV)
def spmv_warp(dev, size, rng):
    _spmv_check(dev, size, rng, lambda m: cdiv(m * 32, 128), 128)


def _bfs_ref(row_ptr, col, n, src):
    dist = np.full(n, -1, np.int32)
    dist[src] = 0
    frontier = [src]
    while frontier:
        nxt = []
        for v in frontier:
            for u in col[row_ptr[v]:row_ptr[v + 1]]:
                if dist[u] < 0:
                    dist[u] = dist[v] + 1
                    nxt.append(u)
        frontier = nxt
    return dist


def _graph(rng, n, kind):
    if kind == "path":  # a long path: one vertex per level
        src = np.arange(n - 1)
        dst = src + 1
    else:  # random power-law-ish graph with self-loops, multi-edges, unreachable parts
        e = 3 * n
        src = np.minimum(rng.zipf(1.5, size=e) - 1, n - 1)
        dst = rng.integers(0, max(1, n * 2 // 3), size=e)
    order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    row_ptr = np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n)))).astype(np.int32)
    return row_ptr, dst.astype(np.int32)


@case("bfs_atomiccas", (1, "random"), (40, "path"), (500, "random"), (3000, "random"))
def bfs_atomiccas(dev, size, rng):
    n, kind = size
    row_ptr, col = _graph(rng, n, kind)
    dist, changed = dev.empty(n, np.int32), dev.zeros(1, np.int32)
    rp, cl = dev.upload(row_ptr), dev.upload(col)
    dev.launch("init", cdiv(n, 128), 128, [dist, n, 0])
    level = 0
    while True:  # the host loop of a level-synchronous BFS
        dev.emu.memset(changed, 0, 4)
        dev.launch("bfs_level", cdiv(n, 128), 128, [rp, cl, dist, n, level, changed])
        if dev.read(changed, np.int32, 1)[0] == 0:
            break
        level += 1
    np.testing.assert_array_equal(dev.read(dist, np.int32, n), _bfs_ref(row_ptr, col, n, 0))

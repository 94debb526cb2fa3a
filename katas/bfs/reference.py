"""BFS: hostile directed graphs in CSR, the exact hop distances, and the traffic and edge counts."""
import math

import numpy as np

PATH_MAX = 400  # the "path" graph's chain: long enough for a high diameter, short enough for the emulator


def _csr(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Rows sorted by source, columns in the order the edges came (the generators make that random:
    # nothing promises sorted adjacency lists).
    order = np.argsort(src, kind="stable")
    counts = np.bincount(src, minlength=n)
    row_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=row_ptr[1:])
    return row_ptr.astype(np.int32), dst[order].astype(np.int32)


def _rmat(rng, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    # Graph500's R-MAT (a, b, c, d) = (0.57, 0.19, 0.19, 0.05): power-law degrees, a giant
    # component, a few hubs with thousands of edges and many vertices with none.
    scale = max(1, math.ceil(math.log2(max(n, 2))))
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    for bit in range(scale):
        r = rng.random(m, dtype=np.float32)  # float32 draws: half the memory at scale 22
        src |= (r >= np.float32(0.76)).astype(np.int64) << bit  # quadrants c or d: the source bit is set
        dst |= (((r >= np.float32(0.57)) & (r < np.float32(0.76))) | (r >= np.float32(0.95))).astype(np.int64) << bit
    perm = rng.permutation(n)  # hubs are not all at small ids; ids past n fold back
    return perm[src % n], perm[dst % n]


def edge_count(n: int, graph: str, degree: int) -> int:
    """The exact number of edges generate() makes (cost() needs it without the data)."""
    if graph in ("rmat", "uniform"):
        return degree * n
    if graph == "grid":
        rows = max(1, math.isqrt(n))
        cols = n // rows
        return 2 * (rows * (cols - 1) + cols * (rows - 1))
    if graph == "path":
        chain = min(n, PATH_MAX)
        return 3 * (chain - 1) + degree * (n - chain)
    if graph == "components":
        return degree * (n // 2)
    raise ValueError(f"unknown graph {graph!r}")


def work(inputs: dict, **_) -> np.ndarray:
    """Per vertex, its out-edges: the loop a vertex's thread (or warp) walks (the H200 model's hubs)."""
    return np.diff(inputs["row_ptr"].astype(np.int64))


def heaviest(rng: np.random.Generator, n: int, graph: str = "rmat", degree: int = 8, **_) -> float | None:
    """The largest out-degree generate() makes, expected (the graph itself is too large to draw
    for this): R-MAT's hub, the vertex whose source bits are all 0, takes 0.76 of the edges per bit."""
    if graph != "rmat":
        return None
    return edge_count(n, graph, degree) * 0.76 ** max(1, math.ceil(math.log2(max(n, 2))))


def generate(rng: np.random.Generator, n: int, graph: str = "rmat", degree: int = 8, **_) -> dict:
    m = edge_count(n, graph, degree)
    source = 0
    if graph == "rmat":
        src, dst = _rmat(rng, n, m)
    elif graph == "uniform":
        src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    elif graph == "grid":
        # A rows × cols lattice with edges both ways (diameter rows + cols); the n - rows*cols
        # leftover vertices are isolated, so they stay at -1.
        rows = max(1, math.isqrt(n))
        cols = n // rows
        ids = np.arange(rows * cols).reshape(rows, cols)
        pairs = [(ids[:, :-1], ids[:, 1:]), (ids[:-1, :], ids[1:, :])]
        src = np.concatenate([np.concatenate([a.ravel(), b.ravel()]) for a, b in pairs])
        dst = np.concatenate([np.concatenate([b.ravel(), a.ravel()]) for a, b in pairs])
        source = int(rng.integers(0, rows * cols))
    elif graph == "path":
        # A chain through shuffled ids (one level per vertex: hundreds of levels), with a
        # duplicate of every chain edge and an edge back to the previous vertex; the vertices off the
        # chain hang from its last vertex as a random graph, reached only at the very end.
        chain = min(n, PATH_MAX)
        order = rng.permutation(n)
        a, b = order[: chain - 1], order[1:chain]
        rest = n - chain
        tail_src = np.concatenate([order[chain - 1:chain], order[chain:]])[rng.integers(0, rest + 1, degree * rest)] \
            if rest else np.zeros(0, np.int64)
        tail_dst = order[chain:][rng.integers(0, rest, degree * rest)] if rest else np.zeros(0, np.int64)
        src = np.concatenate([a, a, b, tail_src])
        dst = np.concatenate([b, b, a, tail_dst])
        source = int(order[0])
    elif graph == "components":
        # Disjoint pieces: edges only among the even ids of the first half, or only among the rest;
        # self-loops and repeated edges included. The source's piece is reachable, nothing else.
        half = n // 2
        k = degree * half
        lo = rng.integers(0, max(half, 1), k)
        hi = rng.integers(0, max(half, 1), k)
        pick = rng.random(k) < 0.5
        src = np.where(pick, 2 * (lo // 2), half + hi)
        dst = np.where(pick, 2 * (hi // 2), half + lo)
        src, dst = np.minimum(src, n - 1), np.minimum(dst, n - 1)
    else:
        raise ValueError(f"unknown graph {graph!r}")
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    assert src.size == m, (graph, src.size, m)
    if graph in ("grid", "path", "components"):
        shuffle = rng.permutation(m)  # the other generators draw edges in random order already
        src, dst = src[shuffle], dst[shuffle]
    if graph in ("rmat", "uniform", "components") and m:
        # Start where there is something to explore: the source of a random edge.
        source = int(src[rng.integers(0, m)])
    row_ptr, col_idx = _csr(n, src, dst)
    return {"row_ptr": row_ptr, "col_idx": col_idx, "n": n, "m": int(m), "source": source}


def reference(inputs: dict, n: int, **_) -> dict:
    row_ptr = inputs["row_ptr"].astype(np.int64)
    col_idx = inputs["col_idx"].astype(np.int64)
    dist = np.full(n, -1, np.int32)
    frontier = np.array([inputs["source"]], np.int64)
    dist[frontier] = 0
    level = 0
    while frontier.size:
        # Every edge leaving the frontier, gathered without a Python loop over vertices.
        starts, ends = row_ptr[frontier], row_ptr[frontier + 1]
        lengths = ends - starts
        if lengths.sum() == 0:
            break
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        targets = np.unique(col_idx[offsets])
        frontier = targets[dist[targets] == -1]
        level += 1
        dist[frontier] = level
    return {"dist": dist}


def cost(n: int, m: int, **_) -> dict:
    # Compulsory: the CSR read once and dist written once. "edges" is what GTEPS counts.
    return {"bytes": 4 * (n + 1) + 4 * m + 4 * n, "flops": 0, "edges": m}


def baseline(torch, inputs: dict, n: int, **_):
    # What a user without a BFS kernel would write: level-synchronous BFS from torch primitives
    # (a frontier mask, the edges leaving it, the unvisited targets). The edge-source array is
    # built once outside the timed call; the host still syncs once per level to test for the end.
    row_ptr, col_idx = inputs["row_ptr"].long(), inputs["col_idx"].long()
    degrees = row_ptr[1:] - row_ptr[:-1]
    src = torch.repeat_interleave(torch.arange(n, device=col_idx.device), degrees)
    source = int(inputs["source"]) if not hasattr(inputs["source"], "item") else int(inputs["source"].item())

    def bfs():
        dist = torch.full((n,), -1, dtype=torch.int32, device=col_idx.device)
        dist[source] = 0
        level = 0
        while True:
            on_frontier = dist[src] == level
            targets = col_idx[on_frontier]
            new = targets[dist[targets] == -1]
            if new.numel() == 0:
                return dist
            level += 1
            dist[new] = level

    return bfs

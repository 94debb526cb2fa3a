"""SpMV: CSR matrices with realistic row-length distributions, the float64 product, the traffic."""
import numpy as np


def _lengths(rng: np.random.Generator, m: int, avg: int, dist: str) -> np.ndarray:
    if dist == "uniform":
        lengths = rng.poisson(avg, m)
    elif dist == "powerlaw":
        # Pareto tail (alpha 1.5, like web and social graphs): most rows short, a few thousand
        # times the average. The mean stays near avg.
        lengths = np.floor(avg / 3.0 * (rng.pareto(1.5, m) + 1.0)).astype(np.int64)
    elif dist == "dense_row":
        lengths = rng.poisson(1.0, m)
    else:
        raise ValueError(f"unknown dist {dist!r}")
    # Empty rows appear in every real matrix; their y must still be written (as 0).
    lengths[rng.random(m) < 0.1] = 0
    if dist == "dense_row":
        # Short rows plus one row holding most of the non-zeros (split across many threads or not).
        lengths[rng.integers(0, m)] = min(2 * m * avg + 50, 20000)
    return lengths.astype(np.int64)


_SCALES = np.array([0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 8.0])


def generate(rng: np.random.Generator, m: int, k: int, avg: int, dist: str = "powerlaw", **_) -> dict:
    if dist == "banded":
        # A band of width ~avg around the (scaled) diagonal, columns sorted: the cache-friendly case.
        width = max(1, avg)
        centre = (np.arange(m, dtype=np.int64) * k) // max(m, 1)
        cols2d = centre[:, None] + np.arange(width, dtype=np.int64)[None, :] - width // 2
        keep = (cols2d >= 0) & (cols2d < k) & (rng.random((m, width)) > 0.05)
        lengths = keep.sum(axis=1)
        col_idx = cols2d[keep]
    else:
        lengths = _lengths(rng, m, avg, dist)
        # Columns drawn independently: unsorted within a row, repeats allowed (CSR sums them).
        col_idx = rng.integers(0, k, int(lengths.sum()), dtype=np.int64)
    row_ptr = np.zeros(m + 1, np.int64)
    np.cumsum(lengths, out=row_ptr[1:])
    nnz = int(row_ptr[-1])
    # Mixed signs around a non-zero mean and a spread of scales; x likewise, so no row sums to ~0
    # by symmetry and dropping one term changes the result far beyond rounding.
    # (scale 0.1 / 1 / 8 with probability 0.2 / 0.7 / 0.1 from one int8 draw into a table of ten:
    # rng.choice with p is 10x slower at the bench's 67 M values)
    vals = rng.normal(0.5, 1.0, nnz) * _SCALES[rng.integers(0, 10, nnz, dtype=np.int8)]
    x = rng.uniform(-1.0, 3.0, k)
    return {"row_ptr": row_ptr.astype(np.int32), "col_idx": col_idx.astype(np.int32),
            "vals": vals.astype(np.float32), "x": x.astype(np.float32), "nnz": nnz}


def work(inputs: dict, **_) -> np.ndarray:
    """Per row, its non-zeros: the loop a row's thread (or warp) walks (the H200 model's heavy rows)."""
    return np.diff(inputs["row_ptr"].astype(np.int64))


def heaviest(rng: np.random.Generator, m: int, avg: int, dist: str = "powerlaw", **_) -> int:
    """The longest row generate(rng, ...) makes, without the matrix: its first draws are the lengths."""
    if dist == "banded":
        return max(1, avg)
    return int(_lengths(rng, m, avg, dist).max())


def _rows(inputs: dict) -> np.ndarray:
    return np.repeat(np.arange(len(inputs["row_ptr"]) - 1), np.diff(inputs["row_ptr"].astype(np.int64)))


def reference(inputs: dict, m: int, **_) -> dict:
    products = inputs["vals"].astype(np.float64) * inputs["x"].astype(np.float64)[inputs["col_idx"]]
    return {"y": np.bincount(_rows(inputs), weights=products, minlength=m)}


def order_bound(inputs: dict, m: int, **_) -> dict:
    # Per row, any order of its L products' sum (each product rounded too): gamma(L + 1) of the
    # magnitudes; within it a kernel is correct, only less accurate.
    products = np.abs(inputs["vals"].astype(np.float64) * inputs["x"].astype(np.float64)[inputs["col_idx"]])
    lengths = np.diff(inputs["row_ptr"].astype(np.int64))
    return {"y": np.bincount(_rows(inputs), weights=products, minlength=m) * _gamma(lengths + 1)}


def _gamma(terms):
    """gamma(k) = k u / (1 - k u), u = 2^-24: the error bound, relative to the sum of magnitudes, of
    a float32 sum of k + 1 terms in any order (Higham, section 4.2)."""
    k = np.maximum(np.asarray(terms, np.float64) - 1.0, 0.0) * 2.0 ** -24
    return k / np.maximum(1.0 - k, 1e-300)


def error_scale(inputs: dict, m: int, **_) -> dict:
    # A float32 row sum errs relative to the magnitudes it adds; for a row of L terms the error
    # grows like sqrt(L) roundings in practice (L in the worst case), whatever the summation order.
    products = np.abs(inputs["vals"].astype(np.float64) * inputs["x"].astype(np.float64)[inputs["col_idx"]])
    lengths = np.diff(inputs["row_ptr"].astype(np.int64))
    return {"y": np.bincount(_rows(inputs), weights=products, minlength=m) * (2.0 + np.sqrt(lengths))}


def cost(m: int, k: int, nnz: int = 0, **params) -> dict:
    # vals and col_idx once (8 nnz), row_ptr (4(m+1)), x at least once (4k), y once (4m).
    return {"bytes": 8 * nnz + 4 * (m + 1) + 4 * k + 4 * m, "flops": 2 * nnz}


def baseline(torch, inputs: dict, m: int, k: int, **_):
    import warnings

    with warnings.catch_warnings():  # torch calls its CSR support "beta" on every construction
        warnings.simplefilter("ignore", UserWarning)
        a = torch.sparse_csr_tensor(inputs["row_ptr"], inputs["col_idx"], inputs["vals"], size=(m, k),
                                    check_invariants=False)
    x = inputs["x"]
    return lambda: torch.mv(a, x)  # cuSPARSE SpMV under the hood

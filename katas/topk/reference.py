"""Top-k: rows with ties and -inf, the exact top values, a check that accepts any order among ties."""
import numpy as np


_SCALES = np.array([1.0] * 8 + [1.0e-3, 1.0e6])


def generate(rng: np.random.Generator, R: int, L: int, k: int, dist: str = "ties", **_) -> dict:
    if dist == "ties":
        # Values on a coarse grid (many exact duplicates, so the k-th value is usually tied),
        # mixed signs and scales, a sprinkle of -inf and of +-0.
        x = np.round(rng.normal(0.0, 4.0, (R, L)) * 2.0) / 2.0
        # scale 1 / 1e-3 / 1e6 with probability 0.8 / 0.1 / 0.1, one int8 draw into a table of ten
        # (rng.choice with p is 10x slower at the bench's 64 M values)
        x *= _SCALES[rng.integers(0, 10, (R, L), dtype=np.int8)]
        x[rng.random((R, L)) < 0.05] = -np.inf
        x[rng.random((R, L)) < 0.02] = -0.0
    elif dist == "distinct":
        # Continuous values: ties are rare, so the order of the output is fully determined.
        x = rng.standard_normal((R, L)) * 100.0 + rng.uniform(-50.0, 50.0, (R, 1))
    elif dist == "negative":
        # Every value below zero, many of them -inf: a float's raw bits order negatives backwards.
        x = -rng.exponential(10.0, (R, L))
        x[rng.random((R, L)) < 0.3] = -np.inf
    elif dist == "constant":
        # One value repeated (per row): every index is a valid answer, duplicates are not.
        x = np.repeat(rng.normal(0.0, 10.0, (R, 1)), L, axis=1)
    else:
        raise ValueError(f"unknown dist {dist!r}")
    return {"x": x.astype(np.float32)}


def reference(inputs: dict, R: int, L: int, k: int, **_) -> dict:
    x = inputs["x"].reshape(R, L)
    # A stable sort on -x gives the k largest, descending, lowest index first among ties.
    order = np.argsort(-x.astype(np.float64), axis=1, kind="stable")[:, :k]
    return {"values": np.take_along_axis(x, order, axis=1), "indices": order.astype(np.int32)}


def check(inputs: dict, outputs: dict, expected: dict, R: int, L: int, k: int, **_) -> list[str]:
    """Values exact and descending; indices in range, distinct per row and pointing at their value;
    any index among equal values is accepted."""
    x = inputs["x"].reshape(R, L)
    got_v = np.asarray(outputs["values"]).reshape(R, k)
    got_i = np.asarray(outputs["indices"]).reshape(R, k).astype(np.int64)
    want_v = np.asarray(expected["values"]).reshape(R, k)
    problems: list[str] = []
    # Whole-array tests first (a bench case has 16384 rows); only rows that fail one are examined
    # one by one, in the same order of tests, for the message.
    out_of_range = (got_i < 0) | (got_i >= L)
    pointed = np.take_along_axis(x, np.where(out_of_range, 0, got_i), axis=1)
    ordered = np.sort(got_i, axis=1)
    suspect = ((~(got_v == want_v)).any(axis=1) | out_of_range.any(axis=1) | (~(pointed == got_v)).any(axis=1)
               | (ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
    for r in np.flatnonzero(suspect):
        r = int(r)
        bad = np.flatnonzero(~(got_v[r] == want_v[r]))  # NaN (unwritten) never equals
        if bad.size:
            j = int(bad[0])
            problems.append(f"row {r}: values[{j}] = {got_v[r, j]!r}, expected {want_v[r, j]!r} "
                            f"({bad.size} of {k} values differ)")
            continue
        idx = got_i[r]
        out = np.flatnonzero((idx < 0) | (idx >= L))
        if out.size:
            j = int(out[0])
            problems.append(f"row {r}: indices[{j}] = {idx[j]} is outside [0, {L})")
            continue
        wrong = np.flatnonzero(~(x[r, idx] == got_v[r]))
        if wrong.size:
            j = int(wrong[0])
            problems.append(f"row {r}: indices[{j}] = {idx[j]} points at {x[r, idx[j]]!r}, "
                            f"but values[{j}] = {got_v[r, j]!r}")
            continue
        uniq, counts = np.unique(idx, return_counts=True)
        if (counts > 1).any():
            problems.append(f"row {r}: index {int(uniq[counts > 1][0])} appears "
                            f"{int(counts.max())} times; the k indices must be distinct")
    return problems


def cost(R: int, L: int, k: int, **_) -> dict:
    # Read x once; write k values and k indices per row.
    return {"bytes": 4 * R * L + 8 * R * k, "flops": 0}


def baseline(torch, inputs: dict, R: int, L: int, k: int, **_):
    x = inputs["x"].reshape(R, L)  # device buffers arrive flat
    return lambda: torch.topk(x, k, dim=1, largest=True, sorted=True)

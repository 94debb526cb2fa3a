"""Reductions: tree, interleaved, warp-unrolled, shuffle, cooperative groups, float4/double."""
import numpy as np

from _zoo import case, cdiv, close_sum

SIZES = (1, 33, 256, 257, 3000)


def _x(rng, n):
    return (rng.standard_normal(n) * 3 + 0.5).astype(np.float32)


def _single(dev, n, rng, grid, block, kernel="reduce", per_block=1, shared=0):
    x = _x(rng, n)
    out = dev.zeros(1, np.float32)
    dev.launch(kernel, grid(n), block, [dev.upload(x), out, n], shared=shared)
    close_sum(dev.read(out, np.float32, 1)[0], x.astype(np.float64).sum(), np.abs(x).sum(), n)


@case("reduce_tree", *SIZES)
def reduce_tree(dev, n, rng):
    _single(dev, n, rng, lambda n: cdiv(n, 256), 256)


@case("reduce_warp_unrolled", *SIZES)
def reduce_warp_unrolled(dev, n, rng):
    _single(dev, n, rng, lambda n: cdiv(n, 512), 256)


@case("reduce_shuffle", *SIZES, 70000)
def reduce_shuffle(dev, n, rng):
    _single(dev, n, rng, lambda n: min(cdiv(n, 256), 8), 256)  # grid-stride beyond 8 blocks


@case("reduce_cg", *SIZES)
def reduce_cg(dev, n, rng):
    _single(dev, n, rng, lambda n: cdiv(n, 128), 128)


@case("reduce_interleaved", *SIZES)
def reduce_interleaved(dev, n, rng):
    x = _x(rng, n)
    blocks = cdiv(n, 128)
    partial = dev.empty(blocks, np.float32)
    dev.launch("reduce_partials", blocks, 128, [dev.upload(x), partial, n], shared=128 * 4)
    # second pass: the same kernel over the partial sums
    out = dev.empty(1, np.float32)
    dev.launch("reduce_partials", 1, 128, [partial, out, blocks], shared=128 * 4)
    close_sum(dev.read(out, np.float32, 1)[0], x.astype(np.float64).sum(), np.abs(x).sum(), n)


@case("reduce_float4_double", 1, 3, 4, 1001, 4099)
def reduce_float4_double(dev, n, rng):
    x = _x(rng, n)
    out = dev.zeros(1, np.float64)
    dev.launch("reduce", 4, 128, [dev.upload(x), out, n])
    got = dev.read(out, np.float64, 1)[0]
    assert abs(got - x.astype(np.float64).sum()) <= 1e-9 * np.abs(x).sum() + 1e-12

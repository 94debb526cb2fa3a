"""Scans (int32, wrapping), histograms and stream compaction."""
import numpy as np

from _zoo import case, cdiv


def _ints(rng, n):
    # values large enough that the prefix sums wrap around int32
    return rng.integers(-(2**31), 2**31 - 1, size=n, dtype=np.int64).astype(np.int32)


def _inclusive(x):
    return np.cumsum(x.astype(np.int64)).astype(np.int64).astype(np.uint64).astype(np.uint32).view(np.int32)


@case("scan_hillis_steele", 1, 255, 256, 257, 5000)
def scan_hillis_steele(dev, n, rng):
    x = _ints(rng, n)
    nb = cdiv(n, 256)
    out, sums, scanned = dev.empty(n, np.int32), dev.empty(nb, np.int32), dev.empty(nb, np.int32)
    dev.launch("scan_blocks", nb, 256, [dev.upload(x), out, sums, n])
    dev.launch("scan_blocks", 1, 256, [sums, scanned, 0, nb])  # nb <= 256 here
    dev.launch("add_offsets", nb, 256, [out, scanned, n])
    np.testing.assert_array_equal(dev.read(out, np.int32, n), _inclusive(x))


@case("scan_blelloch", 1, 2, 255, 256, 257, 4000)
def scan_blelloch(dev, n, rng):
    x = _ints(rng, n)
    nb = cdiv(n, 256)
    out, sums, scanned = dev.empty(n, np.int32), dev.empty(nb, np.int32), dev.empty(nb, np.int32)
    dev.launch("blelloch", nb, 128, [dev.upload(x), out, sums, n])
    dev.launch("blelloch", 1, 128, [sums, scanned, 0, nb])
    dev.launch("add_sums", nb, 128, [out, scanned, n])
    np.testing.assert_array_equal(dev.read(out, np.int32, n), _inclusive(x))


@case("scan_lookback", 1, 127, 128, 129, 3000)
def scan_lookback(dev, n, rng):
    x = _ints(rng, n)
    tiles = cdiv(n, 128)
    out = dev.empty(n, np.int32)
    counter, status = dev.zeros(1, np.uint32), dev.zeros(tiles, np.uint64)
    dev.launch("scan_lookback", tiles, 128, [dev.upload(x), out, n, counter, status])
    np.testing.assert_array_equal(dev.read(out, np.int32, n), _inclusive(x))


@case("scan_lookback", 20000, emulator={"max_resident_blocks": 4})
def scan_lookback_few_resident(dev, n, rng):
    scan_lookback(dev, n, rng)  # 157 tiles through 4 resident blocks: look-back must still progress


def _samples(rng, n, bins, dist):
    if dist == "one":
        return np.full(n, bins - 1, np.int32)
    return np.minimum(rng.zipf(1.3, size=n) - 1, bins - 1).astype(np.int32)


@case("histogram_shared", (1000, 1, "zipf"), (5000, 256, "zipf"), (3000, 4096, "zipf"), (4000, 64, "one"),
      (10, 4096, "zipf"))
def histogram_shared(dev, size, rng):
    n, bins, dist = size
    s = _samples(rng, n, bins, dist)
    hist = dev.zeros(bins, np.uint32)
    dev.launch("histogram", 8, 256, [dev.upload(s), hist, n, bins], shared=bins * 4)
    np.testing.assert_array_equal(dev.read(hist, np.uint32, bins), np.bincount(s, minlength=bins))


@case("histogram_global", (1000, 1, "zipf"), (3000, 256, "zipf"), (4000, 7, "one"), (5, 100, "zipf"))
def histogram_global(dev, size, rng):
    n, bins, dist = size
    s = _samples(rng, n, bins, dist)
    hist = dev.empty(bins, np.uint32)
    dev.launch("zero", cdiv(bins, 256), 256, [hist, bins])
    dev.launch("histogram", cdiv(n, 256), 256, [dev.upload(s), hist, n])
    np.testing.assert_array_equal(dev.read(hist, np.uint32, bins), np.bincount(s, minlength=bins))


@case("compact_ballot", 1, 31, 32, 33, 2000)
def compact_ballot(dev, n, rng):
    x = rng.integers(-1000, 1000, size=n).astype(np.int32)
    out, count = dev.empty(n, np.int32), dev.zeros(2, np.int32)
    dev.launch("compact", cdiv(n, 128), 128, [dev.upload(x), out, count, n, 100])
    kept = x[x > 100]
    cnt = dev.read(count, np.int32, 2)
    assert cnt[0] == kept.size
    np.testing.assert_array_equal(np.sort(dev.read(out, np.int32, n)[: kept.size]), np.sort(kept))
    warps = [x[w:w + 32] for w in range(0, n, 32)]
    assert cnt[1] == sum(1 for w in warps if (w > 100).any() and not (w > 100).all())

"""Grid barrier through a counter, warp-aggregated histogram, padded transpose, broadcast store."""
import numpy as np

from _corpus import case, cdiv_, close


@case("misc_idioms")
def grid_barrier(dev, rng):
    n = 5000
    x = rng.standard_normal(n).astype(np.float32)
    for grid in (4, 9):
        y, part, sync = dev.empty(n, np.float32), dev.empty(grid, np.float32), dev.zeros(2, np.uint32)
        dev.launch("center_grid_sync", grid, 128, [dev.upload(x), y, part, sync, n])
        close(dev.read(y, np.float32, n), x - x.astype(np.float64).mean(), 1e-5, 1e-5, f"grid {grid}")


@case("misc_idioms")
def histogram_aggregated(dev, rng):
    n, nbins = 3001, 20
    data = np.minimum(rng.geometric(0.3, n) - 1, nbins - 1).astype(np.int32)  # skewed: many collisions
    bins = dev.zeros(nbins, np.uint32)
    dev.launch("histogram_warp_aggregated", 3, 128, [dev.upload(data), bins, n, nbins], shared=nbins * 4)
    assert (dev.read(bins, np.uint32, nbins) == np.bincount(data, minlength=nbins)).all()


@case("misc_idioms", kernels=2)
def transpose_padded(dev, rng):
    h, w = 45, 70
    for name, dt in (("transposeNoBankConflicts", np.float32), ("transpose_bf16", np.uint16)):
        a = rng.standard_normal((h, w)).astype(np.float32)
        a = a if dt == np.float32 else a.view(np.uint32).astype(np.uint16)  # any 16-bit patterns
        out = dev.empty(h * w, dt)
        dev.launch(name, (cdiv_(w, 32), cdiv_(h, 32)), (32, 8), [out, dev.upload(a), w, h])
        assert (dev.read(out, dt, h * w).reshape(w, h) == a.T).all(), name


@case("misc_idioms")
def broadcast_store(dev, rng):
    rows, cols = 13, 70
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = dev.empty(rows, np.float32)
    dev.launch("row_max_broadcast_store", cdiv_(rows, 8), 256, [dev.upload(x), out, rows, cols])
    assert (dev.read(out, np.float32, rows) == x.max(1)).all()

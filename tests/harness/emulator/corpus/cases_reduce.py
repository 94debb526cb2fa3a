"""The reduction ladder: reduce0-6 (reduce5 at two block sizes, reduce6 both specialisations),
cooperative groups with atomics, and the single-pass last-block version (run twice: the counter
resets itself)."""
import numpy as np

from _corpus import case, cdiv_, close


def _two_pass(dev, name, x, block, per_thread):
    n = x.size
    blocks = max(1, cdiv_(n, block * per_thread))
    part = dev.empty(blocks, np.int32)
    dev.launch(name, blocks, block, [dev.upload(x), part, n], shared=block * 4)
    out = dev.empty(1, np.int32)
    dev.launch(name, 1, block, [part, out, blocks], shared=block * 4)
    assert dev.read(out, np.int32, 1)[0] == int(x.astype(np.int64).sum()), name


@case("reduce_ladder", kernels=10)
def reduce_ladder(dev, rng):
    x = rng.integers(-1000, 1000, 3001).astype(np.int32)
    for name, block, per in (("reduce0", 128, 1), ("reduce1", 128, 1), ("reduce2", 128, 1), ("reduce3", 128, 2),
                             (dev.kernel("reduce4"), 128, 2), (dev.kernel("reduce5", "ILj256E"), 256, 2),
                             (dev.kernel("reduce5", "ILj64E"), 64, 2)):
        _two_pass(dev, name if name.startswith("_Z") else dev.kernel(name), x, block, per)
    for spec, n in (("ILj128ELb1E", 4096), ("ILj128ELb0E", 3001)):
        y = rng.integers(-1000, 1000, n).astype(np.int32)
        part = dev.empty(4, np.int32)
        dev.launch(dev.kernel("reduce6", spec), 4, 128, [dev.upload(y), part, n], shared=128 * 4)
        assert dev.read(part, np.int32, 4).astype(np.int64).sum() == y.astype(np.int64).sum(), spec


@case("reduce_ladder", kernels=2)
def reduce_cg_and_single_pass(dev, rng):
    x = rng.standard_normal(5000).astype(np.float32)
    want = x.astype(np.float64).sum()
    bound = 1e-5 * np.abs(x).sum()
    out = dev.zeros(1, np.float32)
    dev.launch("reduce_cg_atomic", 6, 128, [dev.upload(x), out, x.size])
    close(dev.read(out, np.float32, 1), [want], 0, bound, "cg")
    px = dev.upload(x)
    for grid in (7, 3):  # the retirement counter is reset by the last block
        part, out = dev.empty(grid, np.float32), dev.empty(1, np.float32)
        dev.launch("reduceSinglePass", grid, 256, [px, part, out, x.size])
        close(dev.read(out, np.float32, 1), [want], 0, bound, f"single pass grid {grid}")

"""The schedule-bug corpus' cases: per pair, the host program and what the wrong kernel's finding
must say. Lines are named by the `MARK name` comments of the sources."""
import numpy as np
from _races import Expect, case, close

I32, F32 = np.int32, np.float32
SYNCTHREADS = ("__syncthreads()",)


# ---- sums into one global place --------------------------------------------------------------
@case("races_global.cu", "ln_bwd_params_plain", "ln_bwd_params_atomic", "global-race",
      Expect("race-waw", "ln-dgamma", "ln-dgamma", "different", ("atomicAdd(",), ("__syncwarp",)))
def ln_bwd_params(dev, rng, kernel):
    rows, cols = 24, 96
    dy = rng.standard_normal((rows, cols)).astype(F32)
    xh = rng.standard_normal((rows, cols)).astype(F32)
    dg, db = dev.zeros(cols, F32), dev.zeros(cols, F32)
    dev.launch(kernel, rows // 4, 128, [dev.upload(dy), dev.upload(xh), dg, db, I32(rows), I32(cols)])
    close(dev.read(dg, F32, cols), (dy * xh).sum(0), 1e-4, 1e-4, "dgamma")
    close(dev.read(db, F32, cols), dy.sum(0), 1e-4, 1e-4, "dbeta")


@case("races_global.cu", "attn_bwd_dq_plain", "attn_bwd_dq_atomic", "global-race",
      Expect("race-waw", "dq-plain", "dq-plain", "same", ("atomicAdd(",)))
def attn_bwd_dq(dev, rng, kernel):
    q, keys, d = 4, 64, 16
    ds = rng.standard_normal((q, keys)).astype(F32)
    k = rng.standard_normal((keys, d)).astype(F32)
    dq = dev.zeros(q * d, F32)
    dev.launch(kernel, q, keys, [dev.upload(ds), dev.upload(k), dq, I32(keys), I32(d), F32(0.125)])
    close(dev.read(dq, F32, q * d).reshape(q, d), 0.125 * ds @ k, 1e-4, 1e-4, "dQ")


@case("races_global.cu", "histogram_plain", "histogram_atomic", "global-race",
      Expect("race-waw", "hist-plain", "hist-plain", None, ("atomicAdd(",)))
def histogram(dev, rng, kernel):
    n, nbins = 1000, 16
    data = rng.integers(0, nbins, n).astype(I32)
    bins = dev.zeros(nbins, np.uint32)
    dev.launch(kernel, 4, 256, [dev.upload(data), bins, I32(n)])
    assert (dev.read(bins, np.uint32, nbins) == np.bincount(data, minlength=nbins)).all(), "histogram"


@case("races_global.cu", "first_max_plain", "first_max_atomic", "global-race",
      Expect("race-waw", "argmax-plain", "argmax-plain", None, ("atomic",)), extra=("any_negative", "bfs_label"))
def first_max(dev, rng, kernel):
    n = 700
    x = rng.integers(0, 5, n).astype(F32)  # many ties for the maximum
    where = dev.upload(np.array([n], I32))
    dev.launch(kernel, 3, 256, [dev.upload(x), F32(x.max()), where, I32(n)])
    got = int(dev.read(where, I32, 1)[0])
    assert got == int(np.argmax(x)), f"first maximum: got {got}, want {int(np.argmax(x))}"
    flag = dev.zeros(1, I32)  # and many threads storing one value: legal, no finding
    dev.launch("any_negative", 3, 256, [dev.upload(x - 2), flag, I32(n)])
    assert int(dev.read(flag, I32, 1)[0]) == 1
    # a BFS level from vertex 0 of a star with repeated edges: many threads label one vertex
    m = 600
    src, dst = np.zeros(m, I32), (1 + np.arange(m) % 7).astype(I32)
    dist = dev.upload(np.array([0] + [-1] * 7, I32))
    dev.launch("bfs_label", 3, 256, [dev.upload(src), dev.upload(dst), dist, I32(m), I32(0)])
    assert (dev.read(dist, I32, 8) == [0] + [1] * 7).all(), "BFS labels"


@case("races_global.cu", "smooth_staged_nosync", "smooth_staged_sync", "global-race",
      Expect("race-raw", "smooth-read", "smooth-write", "same", SYNCTHREADS, ("__syncwarp",)))
def smooth_staged(dev, rng, kernel):
    n = 500
    x = rng.standard_normal(n).astype(F32)
    t, y = dev.empty(n, F32), dev.empty(n, F32)
    dev.launch(kernel, 4, 128, [dev.upload(x), t, y, I32(n)])
    sq = x.astype(np.float64) ** 2
    close(dev.read(y, F32, n), sq + np.append(sq[1:], 0.0), 1e-5, 1e-6, "y")


@case("races_global.cu", "pair_sums_onepass", "pair_sums_partials", "cross-block",
      Expect("race-raw", "pair-read", "pair-write", "different", ("second kernel",)), extra=("pair_sums_combine",))
def pair_sums(dev, rng, kernel):
    blocks = 6
    n = blocks * 128
    x = rng.standard_normal(n).astype(F32)
    part, out = dev.empty(blocks, F32), dev.empty(blocks, F32)
    if kernel == "pair_sums_onepass":
        dev.launch(kernel, blocks, 128, [dev.upload(x), part, out, I32(n)])
    else:
        dev.launch(kernel, blocks, 128, [dev.upload(x), part, I32(n)])
        dev.launch("pair_sums_combine", 1, 32, [part, out, I32(blocks)])
    s = x.astype(np.float64).reshape(blocks, 128).sum(1)
    close(dev.read(out, F32, blocks), s + np.append(0.0, s[:-1]), 1e-4, 1e-4, "pair sums")


@case("races_global.cu", "sum_last_block_nofence", "sum_last_block_fence", "memory-order",
      Expect("race-raw", "fence-read", "fence-write", "different", ("__threadfence()",)))
def sum_last_block(dev, rng, kernel):
    blocks = 8
    n = blocks * 128 - 37
    x = rng.standard_normal(n).astype(F32)
    part, out, ticket = dev.empty(blocks, F32), dev.empty(1, F32), dev.zeros(1, np.uint32)
    dev.launch(kernel, blocks, 128, [dev.upload(x), part, out, ticket, I32(n)])
    close(dev.read(out, F32, 1), [x.astype(np.float64).sum()], 1e-4, 1e-4, "sum")


# ---- the order atomics arrive in, the order blocks run in --------------------------------------
@case("races_order.cu", "moe_place_atomic", "moe_place_ranked", "atomic-order",
      Expect("order-dependent", "moe-slot", None, None, ("order of atomics",)))
def moe_dispatch(dev, rng, kernel):
    n, experts = 600, 8
    expert = rng.integers(0, experts, n).astype(I32)
    counts = np.bincount(expert, minlength=experts)
    offset = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(I32)
    fill, order = dev.zeros(experts, I32), dev.empty(n, I32)
    dev.launch(kernel, 3, 256, [dev.upload(expert), dev.upload(offset), fill, order, I32(n)])
    want = np.argsort(expert, kind="stable")
    assert (dev.read(order, I32, n) == want).all(), "rows of an expert out of token order"


@case("races_order.cu", "compact_atomic", "compact_ranked", "atomic-order",
      Expect("order-dependent", "compact-slot", None, None, ("order of atomics",)))
def compact(dev, rng, kernel):
    n = 500
    x = rng.standard_normal(n).astype(F32)
    keep = x[x > 0]
    out, count = dev.empty(n, F32), dev.zeros(1, I32)
    dev.launch(kernel, 2, 256, [dev.upload(x), out, count, I32(n)])
    assert int(dev.read(count, I32, 1)[0]) == keep.size
    assert (dev.read(out, F32, keep.size) == keep).all(), "compacted values out of input order"


@case("races_order.cu", "xent_mean_onepass", "xent_sum", "cross-block",
      Expect("race-raw", "xent-read", "xent-add", "different", ("second kernel",)), extra=("xent_divide",))
def xent_mean(dev, rng, kernel):
    rows, classes, ignore = 300, 10, -100
    logits = rng.standard_normal((rows, classes)).astype(F32)
    target = rng.integers(0, classes, rows).astype(I32)
    target[rng.random(rows) < 0.3] = ignore
    loss, valid = dev.zeros(1, F32), dev.zeros(1, I32)
    args = [dev.upload(logits), dev.upload(target), loss, valid, I32(rows), I32(classes), I32(ignore)]
    dev.launch(kernel, 5, 64, args)
    if kernel == "xent_sum":
        dev.launch("xent_divide", 1, 1, [loss, valid])
    ok = target != ignore
    z = logits[ok].astype(np.float64)
    lse = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
    want = (lse - z[np.arange(z.shape[0]), target[ok]]).mean()
    close(dev.read(loss, F32, 1), [want], 1e-4, 1e-5, "mean loss")


@case("races_order.cu", "scale_by_max_onepass", "gather_max", "cross-block",
      Expect("race-raw", "max-read", "max-add", "different", ("second kernel",)), extra=("scale_by",))
def scale_by_max(dev, rng, kernel):
    n = 1200
    x = rng.random(n).astype(F32)
    y, mb = dev.empty(n, F32), dev.zeros(1, I32)
    if kernel == "scale_by_max_onepass":
        dev.launch(kernel, 5, 256, [dev.upload(x), y, mb, I32(n)])
    else:
        px = dev.upload(x)
        dev.launch(kernel, 5, 256, [px, mb, I32(n)])
        dev.launch("scale_by", 5, 256, [px, y, mb, I32(n)])
    close(dev.read(y, F32, n), x / x.max(), 1e-6, 0, "x / max")


# ---- barriers ---------------------------------------------------------------------------------
@case("races_barrier.cu", "partition_gather_nosync", "partition_gather_sync", "barrier",
      Expect("race-raw", "perm-read", "perm-write", "same", SYNCTHREADS, ("__syncwarp",)))
def partition_gather(dev, rng, kernel):
    flag = (rng.random(512) < 0.5).astype(I32)
    x = rng.standard_normal(512).astype(F32)
    out = dev.empty(512, F32)
    dev.launch(kernel, 1, 512, [dev.upload(flag), dev.upload(x), out])
    perm = np.argsort(1 - flag, kind="stable")
    assert (dev.read(out, F32, 512) == x[perm[::-1]]).all(), "gathered through the permutation"


@case("races_barrier.cu", "rotate_nosync", "rotate_sync", "scope",
      Expect("race-raw", "rot-read", "rot-write", "same", SYNCTHREADS, ("__syncwarp",)))
def rotate(dev, rng, kernel):
    x = rng.standard_normal(256).astype(F32)
    out = dev.empty(256, F32)
    dev.launch(kernel, 2, 128, [dev.upload(x), out])
    assert (dev.read(out, F32, 256).reshape(2, 128) == np.roll(x.reshape(2, 128), -1, 1)).all()


@case("races_barrier.cu", "rotate_syncwarp", "rotate_sync", "scope",
      Expect("race-raw", "rotw-read", "rotw-write", "same", SYNCTHREADS, ("__syncwarp",)))
def rotate_wrong_scope(dev, rng, kernel):
    rotate(dev, rng, kernel)


@case("races_barrier.cu", "reduce_unrolled_nowarpsync", "reduce_unrolled_warpsync", "scope",
      Expect("race-raw", "unroll-read", None, "same", ("__syncwarp()",), ("__syncthreads",)))
def reduce_unrolled(dev, rng, kernel):
    x = rng.standard_normal(3 * 64).astype(F32)
    out = dev.empty(3, F32)
    dev.launch(kernel, 3, 64, [dev.upload(x), out])
    close(dev.read(out, F32, 3), x.astype(np.float64).reshape(3, 64).sum(1), 1e-5, 1e-5, "block sums")


@case("races_barrier.cu", "scale_tile_nowait", "scale_tile_wait", "cp-async",
      Expect("cp-async-unwaited", "cp-read", None, None, ("cp.async.wait_group",)))
def scale_tile(dev, rng, kernel):
    x = rng.standard_normal(2 * 512).astype(F32)
    out = dev.empty(2 * 512, F32)
    dev.launch(kernel, 2, 128, [dev.upload(x), out, F32(3.0)])
    want = 3.0 * np.roll(x.reshape(2, 512), -1, 1)[:, :128]
    got = dev.read(out, F32, 1024).reshape(2, 512)[:, :128]
    close(got, want, 1e-6, 0, "scaled tile")


@case("races_barrier.cu", "reverse_half_branch", "reverse_half_uniform", "branch-barrier",
      Expect("barrier-after-exit", "branch-bar", None, None, ("took the branch at races_barrier.cu:",),
             ("early return",)))
def reverse_half(dev, rng, kernel):
    x = rng.standard_normal(128).astype(F32)
    out = dev.empty(128, F32)
    dev.launch(kernel, 1, 128, [dev.upload(x), out, I32(64)])
    assert (dev.read(out, F32, 64) == x[:64][::-1]).all()


# ---- numba ------------------------------------------------------------------------------------
@case("races_numba.py", "rotate_nosync", "rotate_sync", "numba",
      Expect("race-raw", "nb-rot-read", "nb-rot-write", "same", ("cuda.syncthreads()",), ("__syncthreads", "__syncwarp")))
def numba_rotate(dev, rng, kernel):
    rotate(dev, rng, kernel)


@case("races_numba.py", "total_plain", "total_atomic", "numba",
      Expect("race-waw", "nb-total", "nb-total", None, ("cuda.atomic.add(",), ("atomicAdd(",)))
def numba_total(dev, rng, kernel):
    n = 600
    x = rng.standard_normal(n).astype(F32)
    out = dev.zeros(1, F32)
    dev.launch(kernel, 3, 256, [dev.upload(x), out])
    close(dev.read(out, F32, 1), [x.astype(np.float64).sum()], 1e-4, 1e-4, "total")


# ---- cause before symptom -------------------------------------------------------------------
@case("races_global.cu", "inverse_gather_onepass", "inverse_scatter", "cross-block",
      Expect("race-raw", "inv-read", "inv-write", "different", ("second kernel",)), extra=("gather_through",))
def inverse_gather(dev, rng, kernel):
    n = 1000
    q = rng.permutation(n).astype(I32)
    x = rng.standard_normal(n).astype(F32)
    p, out = dev.empty(n, I32), dev.empty(n, F32)
    if kernel == "inverse_gather_onepass":
        dev.launch(kernel, 4, 256, [dev.upload(q), dev.upload(x), p, out, I32(n)])
    else:
        px = dev.upload(x)
        dev.launch(kernel, 4, 256, [dev.upload(q), p, I32(n)])
        dev.launch("gather_through", 4, 256, [px, p, out, I32(n)])
    inv = np.empty(n, np.int64)
    inv[q] = np.arange(n)
    assert (dev.read(out, F32, n) == x[inv]).all(), "gathered through the inverse permutation"


@case("races_numba.py", "reverse_half_branch", "reverse_half_uniform", "numba",
      Expect("barrier-after-exit", "nb-branch-bar", None, None, ("cuda.syncthreads() at races_numba.py:",
                                                                 "took the branch at races_numba.py:"),
             ("early return",)))
def numba_reverse_half(dev, rng, kernel):
    reverse_half(dev, rng, kernel)


# ---- the order of a block's warps; a write after another block's read -------------------------
@case("races_warps.cu", "row_sum_last_warp", "row_sum_barrier", "warp-order",
      Expect("order-dependent", "warp-last", None, None, ("order of warps",)))
def row_sum_last_warp(dev, rng, kernel):
    rows, cols = 3, 1000
    x = rng.standard_normal((rows, cols)).astype(F32)
    out = dev.empty(rows, F32)
    dev.launch(kernel, rows, 256, [dev.upload(x), out, I32(cols)])
    close(dev.read(out, F32, rows), x.astype(np.float64).sum(axis=1), 1e-4, 1e-3, "row sums")


@case("races_warps.cu", "smooth_in_place", "smooth_out_of_place", "cross-block",
      Expect("race-war", "smooth-write", "smooth-read", "different", ("second kernel",)))
def smooth(dev, rng, kernel):
    n = 6 * 128 - 5
    x = rng.standard_normal(n).astype(F32)
    px, py = dev.upload(x), dev.empty(n, F32)
    dev.launch(kernel, 6, 128, [px, py, I32(n)])
    want = 0.5 * (x + np.append(x[1:], x[-1]))
    close(dev.read(px if kernel == "smooth_in_place" else py, F32, n), want, 1e-6, 1e-6, "smoothed")


@case("races_warps.cu", "shift_in_place", "shift_in_place_synced", "warp-order",
      Expect("race-war", "shift-write", "shift-read", "same", ("__syncthreads()", "different warps"),
             ("__syncwarp()",)))
def shift(dev, rng, kernel):
    n = 256 - 3
    x = rng.standard_normal(n).astype(F32)
    px = dev.upload(x)
    dev.launch(kernel, 1, 256, [px, I32(n)])
    close(dev.read(px, F32, n), np.append(x[1:], F32(0)), 0, 0, "shifted")

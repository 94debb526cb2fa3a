"""Launch plan of the ring_split variant: S warps split each 16-row tile's K, S the smallest of
1, 2, 4, 8 that gives >= 12 warps an SM (one wave, loads always in flight); 8 warps a block."""

WARPS_PER_SM = 12


def launch(gpu, Wq, scales, x, y, N, K):
    tiles = gpu.cdiv(N, 16)
    split = 1
    while split < 8 and tiles * split < WARPS_PER_SM * gpu.device.sm_count:
        split *= 2
    per_block = 8 // split
    gpu.launch("qgemv", grid=gpu.cdiv(tiles, per_block), block=(32, split, per_block),
               args=(Wq, scales, x, y, N, K))

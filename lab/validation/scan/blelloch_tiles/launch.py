"""Blelloch scan of 512-element tiles (256 threads), recursive tile totals, add the offsets."""

T = 512


def launch(gpu, x, y, n):
    _scan(gpu, x, y, n)


def _scan(gpu, x, y, n):
    tiles = gpu.cdiv(n, T)
    sums = gpu.empty(tiles, "int32")
    gpu.launch("scan_tiles", grid=tiles, block=T // 2, args=(x, y, sums, n))
    if tiles > 1:
        _scan(gpu, sums, sums, tiles)  # in place: each thread reads its two elements before writing them
        gpu.launch("add_offsets", grid=tiles, block=T // 2, args=(y, sums, n))

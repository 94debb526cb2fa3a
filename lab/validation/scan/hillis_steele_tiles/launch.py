"""Scan 256-element tiles, scan the tile totals recursively, add the offsets."""

BLOCK = 256


def launch(gpu, x, y, n):
    _scan(gpu, x, y, n)


def _scan(gpu, x, y, n):
    tiles = gpu.cdiv(n, BLOCK)
    sums = gpu.empty(tiles, "int32")
    gpu.launch("scan_tiles", grid=tiles, block=BLOCK, args=(x, y, sums, n))
    if tiles > 1:
        _scan(gpu, sums, sums, tiles)
        gpu.launch("add_offsets", grid=tiles, block=BLOCK, args=(y, sums, n))

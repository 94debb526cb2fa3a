"""Default launch plan for the numba scan stub: scan tiles, scan the tile totals (recursively), add."""

BLOCK = 256  # kernel.py's THREADS


def launch(gpu, x, y, n):
    _scan(gpu, x, y, n)


def _scan(gpu, x, y, n):
    tiles = gpu.cdiv(n, BLOCK)
    sums = gpu.empty(tiles, "int32")
    gpu.launch("scan_tiles", grid=tiles, block=BLOCK, args=(x, y, sums, n))
    if tiles > 1:
        _scan(gpu, sums, sums, tiles)  # the tile totals, scanned in place one level up
        gpu.launch("add_offsets", grid=tiles, block=BLOCK, args=(y, sums, n))

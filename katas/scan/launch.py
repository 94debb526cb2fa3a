"""Default launch plan for the scan stub: scan tiles, scan the tile totals recursively, add offsets."""

BLOCK = 256  # must match BLOCK in stub.cu


def launch(gpu, x, y, n):
    _scan(gpu, x, y, n)


def _scan(gpu, x, y, n):
    tiles = gpu.cdiv(n, BLOCK)
    sums = gpu.empty(tiles, "int32")
    gpu.launch("scan_tiles", grid=tiles, block=BLOCK, args=(x, y, sums, n))
    if tiles > 1:
        # The tile totals are themselves an array to scan: the same plan, in place, one level up.
        _scan(gpu, sums, sums, tiles)
        gpu.launch("add_offsets", grid=tiles, block=BLOCK, args=(y, sums, n))

"""Launch plan of the reduce-then-scan numba solution: reduce the chunks, scan the chunk sums,
rescan each chunk with its offset."""

THREADS, ITEMS = 256, 8
TILE = THREADS * ITEMS  # kernel.py's TILE


def launch(gpu, x, y, n):
    tiles = gpu.cdiv(n, TILE)
    # 8 blocks of 256 threads fill an SM; one chunk per block, so the grid is one wave and the
    # chunk sums are few (one block scans them). At least 4 tiles per chunk keeps the carry loop busy.
    grid = max(1, min(gpu.device.sm_count * 8, gpu.cdiv(tiles, 4)))
    chunk = gpu.cdiv(tiles, grid) * TILE  # a multiple of TILE
    grid = gpu.cdiv(n, chunk)
    sums = gpu.empty(grid, "uint32")
    gpu.launch("scan_reduce", grid=grid, block=THREADS, args=(x, sums, n, chunk))
    gpu.launch("scan_chunk_sums", grid=1, block=THREADS, args=(sums, grid))
    gpu.launch("scan_downsweep", grid=grid, block=THREADS, args=(x, y, sums, n, chunk))

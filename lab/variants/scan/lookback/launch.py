"""Launch plan of the single-pass scan: one zeroed buffer (tile counter + tile status), one launch."""

TILE = 4096  # 256 threads x 16 items; must match kernel.cu


def launch(gpu, x, y, n):
    tiles = gpu.cdiv(n, TILE)
    # One memset for both: word 0 is the tile counter, words 1.. the status of each tile (0 = no
    # news). Each block takes the next tile id from the counter, so the grid is one block per tile.
    state = gpu.zeros(tiles + 1, "uint64")
    gpu.launch("scan_lookback", grid=tiles, block=256,
               args=(x, y, state.view(1, tiles), state.view(0, 1), n))

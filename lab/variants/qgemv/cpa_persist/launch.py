"""Launch plan of the cpa_persist variant: K % 1024 == 0 takes the persistent stream kernel, at
most BLOCKS_PER_SM blocks an SM (never more than tiles); other K the solution's rounds."""

BLOCKS_PER_SM = 4


def launch(gpu, Wq, scales, x, y, N, K):
    tiles = gpu.cdiv(N, 16)
    if K % 1024 == 0:
        grid = min(tiles, BLOCKS_PER_SM * gpu.device.sm_count)
        gpu.launch("qgemv_stream", grid=grid, block=256, args=(Wq, scales, x, y, N, K))
    else:
        gpu.launch("qgemv", grid=tiles, block=256, args=(Wq, scales, x, y, N, K))

"""Launch plan of the cpa_xs variant: a 256-thread block per 16-row tile. K % (1024 GPS) == 0
takes the stream kernel with its ring and x in dynamic shared memory (when they fit); other K the
solution's rounds."""

STAGES, GPS = 3, 2  # as kernel.cu's #defines
STAGE_BYTES = 16 * 16 * (32 * GPS + GPS)  # sizeof(Stage)


def launch(gpu, Wq, scales, x, y, N, K):
    shared = STAGES * STAGE_BYTES + 2 * K
    if K % (1024 * GPS) == 0 and shared + 512 <= gpu.device.max_shared_per_block_optin:
        gpu.launch("qgemv_stream", grid=gpu.cdiv(N, 16), block=256, args=(Wq, scales, x, y, N, K), shared=shared)
    else:
        gpu.launch("qgemv", grid=gpu.cdiv(N, 16), block=256, args=(Wq, scales, x, y, N, K))

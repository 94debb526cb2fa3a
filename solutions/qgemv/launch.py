"""Launch plan of the qgemv solution: a 256-thread block per 16-row tile, its 8 warps splitting K
(one mma.sync tile of 16 rows; at 4096 rows that is 256 blocks, two an SM). K % 1024 == 0 takes
the cp.async stream kernel, with its ring and the staged x in dynamic shared memory; any other K
(or an x too long for shared memory) the rounds kernel."""

STAGES = 4  # as kernel.cu's #define
STAGE_BYTES = 16 * 16 * 33  # sizeof(Stage): 16 rows x 32 uint4 of weights, 16 uint4 of scales


def launch(gpu, Wq, scales, x, y, N, K):
    shared = STAGES * STAGE_BYTES + 2 * K
    if K % 1024 == 0 and shared + 512 <= gpu.device.max_shared_per_block_optin:
        gpu.launch("qgemv_stream", grid=gpu.cdiv(N, 16), block=256, args=(Wq, scales, x, y, N, K), shared=shared)
    else:
        gpu.launch("qgemv", grid=gpu.cdiv(N, 16), block=256, args=(Wq, scales, x, y, N, K))

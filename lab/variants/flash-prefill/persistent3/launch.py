"""Launch plan of the persistent wgmma flash-prefill (one block per SM walking the tiles): 3-D tensor maps (d, s, b·h) of Q, K and V with the
128-byte swizzle (boxes of 64 d × 128 query rows for Q, 64 d × BN keys for K and V: TMA zero-fills
rows past S), one block of 384 threads (a producer warpgroup and two consumer warpgroups of 64
query rows) per 128 query rows of one (batch, head): grid (B·H, cdiv(S, 128)), the kernel reverses
the row tiles so the longest causal ones start first. The K/V ring's depth is the kernel's `stages`
argument (1 to 4). Dynamic shared memory: the Q tile, STAGES stages of K and V tiles, and 1 KB to align
them to the swizzle's 1024-byte atoms."""

BM, BN, STAGES = 128, 128, 3
GRID = 0  # persistent blocks (0: one per SM); a test sets 1 or 2 to walk many tiles a block


def launch(gpu, Q, K, V, O, B, H, S, D, causal):
    maps = [
        gpu.tensor_map(
            t,
            global_dim=(D, S, B * H),
            global_strides=(2 * D, 2 * D * S),
            box_dim=(64, rows, 1),
            swizzle="128B",
            dtype="bfloat16",
        )
        for t, rows in ((Q, BM), (K, BN), (V, BN))
    ]
    shared = (BM + 2 * STAGES * BN) * D * 2 + 1024
    gpu.launch(
        f"flash_prefill_d{D}",
        grid=min(GRID or gpu.device.sm_count, B * H * gpu.cdiv(S, BM)),
        block=384,
        args=(*maps, O, S, causal, STAGES, B * H),
        shared=shared,
    )

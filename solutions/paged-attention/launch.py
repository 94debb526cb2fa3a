"""Launch plan of the paged-attention solution: a grid of warps, each taking an equal run of the
(sequence, head group, cache block) list (no plan launch), then the combine per (head, sequence),
which finds each row's partials by the split kernel's own arithmetic."""

WARPS_PER_SM = 8  # = MIN_WARPS in kernel.cu: the double-buffered registers take ~250 per thread


def launch(gpu, q, k_cache, v_cache, block_table, seq_lens, out, B, Hkv, G, num_blocks, max_blocks):
    # A row (sequence, query head) of n blocks gets at most ceil(n / 16) + 1 partials: runs are at
    # least 16 blocks long, and a row's blocks can start and end inside one. Scratch is sized for
    # the widest table, since the plan cannot see the lengths.
    splits = gpu.cdiv(max_blocks, 16) + 1
    Hq = Hkv * G
    gt = 4 if G % 4 == 0 else 1  # query heads per warp, all of one KV head (the bench's G = 4)
    part_acc = gpu.empty(B * Hq * splits * 128, "float32")
    part_ml = gpu.empty(B * Hq * splits * 2, "float32")
    warps = min(gpu.cdiv(B * (Hq // gt) * max_blocks, 16), WARPS_PER_SM * gpu.device.sm_count)
    gpu.launch(f"paged_split_g{gt}", grid=warps, block=32,
               args=(q, k_cache, v_cache, block_table, seq_lens, part_acc, part_ml, B, Hkv, G, max_blocks, splits))
    gpu.launch("paged_combine", grid=(Hq, B), block=128,
               args=(part_acc, part_ml, seq_lens, out, B, gt, splits, warps))

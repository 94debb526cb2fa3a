"""Launch plan of the paged-attention variant `previous` (the solution until 2026-12-01): count
each sequence's work items, let a grid of warps take them (256-token splits x groups of query
heads), then combine the splits per head."""

SPLIT_TOKENS = 256  # = SPLIT_BLOCKS * 16 in kernel.cu
WARPS_PER_SM = 12  # paged_split_g4 takes ~165 registers: 12 one-warp blocks fit an SM's 64K


def launch(gpu, q, k_cache, v_cache, block_table, seq_lens, out, B, Hkv, G, num_blocks, max_blocks):
    # The plan sees only the table's width, not the lengths: scratch is sized for the widest
    # possible sequence, and paged_plan tells the warps which items are real.
    splits = gpu.cdiv(max_blocks * 16, SPLIT_TOKENS)
    Hq = Hkv * G
    gt = 4 if G % 4 == 0 else 1  # query heads per warp, all of one KV head (the bench's G = 4)
    part_acc = gpu.empty(B * Hq * splits * 128, "float32")
    part_ml = gpu.empty(B * Hq * splits * 2, "float32")
    offsets = gpu.empty(B + 1, "int32")
    gpu.launch("paged_plan", grid=1, block=32, args=(seq_lens, B, Hq // gt, offsets))
    warps = min(B * (Hq // gt) * splits, WARPS_PER_SM * gpu.device.sm_count)
    gpu.launch(f"paged_split_g{gt}", grid=warps, block=32,
               args=(q, k_cache, v_cache, block_table, seq_lens, offsets, part_acc, part_ml, B, Hkv, G,
                     max_blocks, splits))
    gpu.launch("paged_combine", grid=(Hq, B), block=128, args=(part_acc, part_ml, seq_lens, out, splits))

"""paged-attention variant: a grid of (splits for the widest table, head groups, sequences) one-warp
blocks; the blocks past a sequence's end return at once (no work list)."""

SPLIT_TOKENS = 256  # = SPLIT_BLOCKS * 16 in kernel.cu


def launch(gpu, q, k_cache, v_cache, block_table, seq_lens, out, B, Hkv, G, num_blocks, max_blocks):
    # The plan sees only the table's width, not the lengths: size the splits for the longest
    # possible sequence; the warps of splits past a shorter sequence's end return at once.
    splits = gpu.cdiv(max_blocks * 16, SPLIT_TOKENS)
    Hq = Hkv * G
    part_acc = gpu.empty(B * Hq * splits * 128, "float32")
    part_ml = gpu.empty(B * Hq * splits * 2, "float32")
    # GT query heads per warp, all of one KV head: 4 when 4 divides G (the bench's G = 4), else 1.
    gt = 4 if G % 4 == 0 else 1
    gpu.launch(f"paged_split_g{gt}", grid=(splits, Hq // gt, B), block=32,
               args=(q, k_cache, v_cache, block_table, seq_lens, part_acc, part_ml, Hkv, G, max_blocks))
    gpu.launch("paged_combine", grid=(Hq, B), block=128, args=(part_acc, part_ml, seq_lens, out, splits))

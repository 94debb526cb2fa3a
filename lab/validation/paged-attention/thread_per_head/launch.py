"""One thread per (query head, sequence), 64 per block."""


def launch(gpu, q, k_cache, v_cache, block_table, seq_lens, out, B, Hkv, G, num_blocks, max_blocks):
    Hq = Hkv * G
    gpu.launch("paged_attention", grid=gpu.cdiv(B * Hq, 64), block=64,
               args=(q, k_cache, v_cache, block_table, seq_lens, out, Hkv, G, max_blocks, B, Hq))

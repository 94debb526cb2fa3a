"""One 128-thread block per (query head, sequence)."""


def launch(gpu, q, k_cache, v_cache, block_table, seq_lens, out, B, Hkv, G, num_blocks, max_blocks):
    gpu.launch("paged_attention", grid=(Hkv * G, B), block=128,
               args=(q, k_cache, v_cache, block_table, seq_lens, out, Hkv, G, max_blocks))

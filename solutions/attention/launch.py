"""Launch plan of the attention solution: one block per (query tile, batch·head), kernel by head size."""

# head size -> (kernel, query rows per block, threads per block); see kernel.cu's entries
TILES = {32: ("attention_d32", 64, 256), 64: ("attention_d64", 64, 256), 128: ("attention_d128", 32, 128)}


def launch(gpu, Q, K, V, O, B, H, S, D, causal):
    name, rows, threads = TILES[D]
    gpu.launch(name, grid=(gpu.cdiv(S, rows), B * H), block=threads, args=(Q, K, V, O, S, causal))

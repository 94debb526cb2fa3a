"""Launch plan of the top-p solution: 1024-thread blocks, each sampling rows in turn, with only as
many rows in flight as keep their logits in L2 across the kernel's six passes over each row."""


def launch(gpu, logits, temperature, top_p, u, token, R, V):
    # A row is 4V bytes (513 KB at V = 128256). Rows read six times stay in L2 if the rows in
    # flight fit in ~60 % of it (H200: 60 MB in two partitions): 73 rows there. A block (64
    # registers a thread: one per SM) keeps 64 KB of loads in flight, enough for L2's rate but
    # not DRAM's with few SMs, so never fewer rows than half the SMs. Rows are dealt out evenly:
    # 256 rows -> 4 rounds of 64, not 3 of 73 and a ragged fourth.
    fit = max(gpu.device.sm_count // 2, int(0.6 * gpu.device.l2_bytes) // (4 * V))
    rounds = gpu.cdiv(R, max(1, fit))
    gpu.launch("top_p_sample", grid=gpu.cdiv(R, rounds), block=1024,
               args=(logits, temperature, top_p, u, token, R, V))

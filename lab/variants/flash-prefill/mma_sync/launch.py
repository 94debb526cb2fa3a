"""Launch plan of the flash-prefill solution: one 128-thread block (4 warps × 16 query rows) per
64 query rows of one (batch, head): grid (cdiv(S, 64), B·H); the kernel compiled for the head
dimension D."""


def launch(gpu, Q, K, V, O, B, H, S, D, causal):
    gpu.launch(f"flash_prefill_d{D}", grid=(gpu.cdiv(S, 64), B * H), block=128, args=(Q, K, V, O, S, D, causal))

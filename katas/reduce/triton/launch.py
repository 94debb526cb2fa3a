"""Default launch plan for the Triton reduce stub: one program per BLOCK elements.

A Triton launch names the kernel, the grid (programs), the runtime args, the constexprs and
num_warps / num_stages; the block is 32 * num_warps threads, the compiler's choice of shared memory.
"""


def launch(gpu, x, out, n):
    BLOCK = 1024
    # out is poisoned with NaN before every run; kernels that atomically add into it need a zero.
    gpu.memset(out, 0)
    gpu.launch("reduce", grid=gpu.cdiv(n, BLOCK), args=(x, out, n), num_warps=4, num_stages=1,
               constexprs=dict(BLOCK=BLOCK))

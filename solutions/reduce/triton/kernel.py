"""Sum reduction in Triton: a grid the size of the GPU, each program a grid-stride loop over tiles
of BLOCK floats accumulated elementwise in registers, one tl.sum and one atomic per program."""
import triton
import triton.language as tl


@triton.jit
def reduce(x, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out, tl.sum(acc, axis=0))

# Sum n float32 values into out[0], in Triton. `kata grade` compiles this file with triton.compile
# for the H200 (sm_90) and runs the PTX on kata's emulator, or on the GPU.
import triton
import triton.language as tl


@triton.jit
def reduce(x, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # TODO: load this program's tiles of BLOCK elements (tl.arange, and a mask for the tail).
    # TODO: add them up (tl.sum) and add the program's sum into out[0] (tl.atomic_add).
    pass

# Sum n float32 values into out[0], in numba.cuda. `kata grade` compiles this file with
# numba.cuda.compile_ptx for the H200 (sm_90); x and out arrive as 1-D float32 arrays, n as an int32.
from numba import cuda, float32

THREADS = 256  # threads per block: launch.py's block


@cuda.jit
def reduce(x, out, n):
    partial = cuda.shared.array(THREADS, float32)
    # TODO: each thread adds up its share of x (a grid-stride loop: cuda.grid(1), cuda.gridsize(1)).
    # TODO: combine the block's sums in `partial` (a tree, with cuda.syncthreads() between steps).
    # TODO: one thread per block adds the block's sum into out[0] (cuda.atomic.add).
    pass

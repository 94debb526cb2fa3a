"""Sum reduction in numba.cuda: a grid-stride loop per thread, a shared-memory tree per block
(cuda.syncthreads between its steps), one atomic per block."""
from numba import cuda, float32

THREADS = 256  # must match launch.py's block


@cuda.jit
def reduce(x, out, n):
    partial = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = float32(0.0)
    while i < n:
        acc += x[i]
        i += stride
    partial[t] = acc
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            partial[t] += partial[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        cuda.atomic.add(out, 0, partial[0])

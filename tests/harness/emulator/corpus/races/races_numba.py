"""numba.cuda kernels with races, each with its right twin (compiled by kata's numba frontend)."""
from numba import cuda, float32


@cuda.jit
def rotate_nosync(x, out):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.blockIdx.x * 128 + t]  # MARK nb-rot-write
    out[cuda.blockIdx.x * 128 + t] = s[(t + 1) % 128]  # MARK nb-rot-read


@cuda.jit
def rotate_sync(x, out):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.blockIdx.x * 128 + t]
    cuda.syncthreads()
    out[cuda.blockIdx.x * 128 + t] = s[(t + 1) % 128]


@cuda.jit
def total_plain(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0] += x[i]  # MARK nb-total


@cuda.jit
def total_atomic(x, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, 0, x[i])


@cuda.jit
def reverse_half_branch(x, out, half):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    if t < half:  # MARK nb-branch-if
        s[t] = x[t]
        cuda.syncthreads()  # MARK nb-branch-bar
        out[t] = s[half - 1 - t]


@cuda.jit
def reverse_half_uniform(x, out, half):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    if t < half:
        s[t] = x[t]
    cuda.syncthreads()
    if t < half:
        out[t] = s[half - 1 - t]

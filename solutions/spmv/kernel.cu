// CSR SpMV, y = A x, load-balanced for skewed rows in two launches.
//
//   spmv_rows  a group of `lanes` threads per row (lanes = the average row length rounded up to
//              a power of two, 1..32): short rows keep every lane busy and their loads coalesced.
//              Rows longer than 16 x lanes would keep one group busy for long after the others
//              finish (a power-law row can hold a million non-zeros), so the group only zeroes
//              y[row] and queues the row as SEG-sized segments.
//   spmv_long  one warp per queued segment, every warp of the GPU on the long rows at once; the
//              partial sums meet in y[row] with atomicAdd.
//
// The queue is built with one atomic per warp (a warp scan of the segment counts), not one per
// row: thousands of long rows would otherwise serialise on a single counter in L2.
#define THREADS 256
#define SEG 1024  // non-zeros per queued segment: 32 iterations of one warp
#define FULL 0xffffffffu

// The dot product of one row slice, `lanes` threads apart. Two independent gathers per iteration
// keep two loads of x in flight per thread: SpMV is latency-bound on those gathers.
__device__ __forceinline__ float slice_dot(const int* __restrict__ col_idx, const float* __restrict__ vals,
                                           const float* __restrict__ x, int begin, int end, int lane, int lanes)
{
    float a = 0.0f, b = 0.0f;
    int j = begin + lane;
    for (; j + lanes < end; j += 2 * lanes) {
        a += vals[j] * __ldg(x + col_idx[j]);
        b += vals[j + lanes] * __ldg(x + col_idx[j + lanes]);
    }
    if (j < end) a += vals[j] * __ldg(x + col_idx[j]);
    return a + b;
}

extern "C" __global__ void __launch_bounds__(THREADS)
spmv_rows(const int* __restrict__ row_ptr, const int* __restrict__ col_idx, const float* __restrict__ vals,
          const float* __restrict__ x, float* __restrict__ y, int m, int lanes,
          int* __restrict__ tasks, int* __restrict__ task_count)
{
    const int gid = blockIdx.x * THREADS + threadIdx.x;
    const int row = gid / lanes;  // lanes is a power of two, so groups never straddle a warp
    const int lane = gid & (lanes - 1);
    const int warp_lane = threadIdx.x & 31;
    // The group's lanes: shuffles name only them, because other groups of this warp leave early.
    const unsigned group = lanes == 32 ? FULL : ((1u << lanes) - 1u) << (warp_lane & ~(lanes - 1));

    int begin = 0, end = 0;
    if (row < m) {
        begin = row_ptr[row];
        end = row_ptr[row + 1];
    }
    const bool is_long = end - begin > 16 * lanes;

    // Queue the long rows' segments. Every lane of the warp is still here, so full-warp
    // shuffles are safe: an inclusive scan of the segment counts gives each row its slots.
    const int nseg = is_long && lane == 0 ? (end - begin + SEG - 1) / SEG : 0;
    int incl = nseg;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int t = __shfl_up_sync(FULL, incl, d);
        if (warp_lane >= d) incl += t;
    }
    const int warp_total = __shfl_sync(FULL, incl, 31);
    int base = 0;
    if (warp_lane == 31 && warp_total > 0) base = atomicAdd(task_count, warp_total);
    base = __shfl_sync(FULL, base, 31) + incl - nseg;
    if (nseg > 0) {
        y[row] = 0.0f;  // spmv_long adds into it
        for (int s = 0; s < nseg; ++s) {
            tasks[2 * (base + s)] = row;
            tasks[2 * (base + s) + 1] = s;
        }
    }
    if (row >= m || is_long) return;  // whole groups leave together

    float sum = slice_dot(col_idx, vals, x, begin, end, lane, lanes);
    for (int off = lanes >> 1; off > 0; off >>= 1) sum += __shfl_xor_sync(group, sum, off);
    if (lane == 0) y[row] = sum;  // empty rows write 0 too
}

extern "C" __global__ void __launch_bounds__(THREADS)
spmv_long(const int* __restrict__ row_ptr, const int* __restrict__ col_idx, const float* __restrict__ vals,
          const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ tasks,
          const int* __restrict__ task_count)
{
    const int count = *task_count;
    const int lane = threadIdx.x & 31;
    const int warps = gridDim.x * (THREADS / 32);
    // The grid is sized to the GPU, not to the queue (whose length only the device knows).
    for (int t = blockIdx.x * (THREADS / 32) + (threadIdx.x >> 5); t < count; t += warps) {
        const int row = tasks[2 * t];
        const int begin = row_ptr[row] + tasks[2 * t + 1] * SEG;
        const int end = min(begin + SEG, row_ptr[row + 1]);
        float sum = slice_dot(col_idx, vals, x, begin, end, lane, 32);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(FULL, sum, off);
        if (lane == 0) atomicAdd(y + row, sum);
    }
}

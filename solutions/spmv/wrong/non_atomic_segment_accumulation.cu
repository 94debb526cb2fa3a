// kata-expect: wrong-answer
// Warps adding the segments of one long row with y[row] += sum read the same old value and lose each other's partial sums.
#define THREADS 256
#define UNROLL 4
#define LONG (4 * UNROLL)  // a row is long past LONG non-zeros per lane of its group
#define SEG 1024           // non-zeros per queued segment: 32 iterations of one warp
#define FULL 0xffffffffu

// One lane's share of row slice [begin, end): elements begin + lane + lanes*u. All loads of an
// iteration are issued before the first use, so UNROLL gathers of x are in flight at once.
__device__ __forceinline__ float lane_dot(const int* __restrict__ col_idx, const float* __restrict__ vals,
                                          const float* __restrict__ x, int begin, int end, int lane, int lanes)
{
    float sum = 0.0f;
    for (int j = begin + lane; j < end; j += UNROLL * lanes) {
        int c[UNROLL];
        float v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const int i = j + u * lanes;
            c[u] = i < end ? __ldg(col_idx + i) : -1;
            v[u] = i < end ? __ldg(vals + i) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            if (c[u] >= 0) sum += v[u] * __ldg(x + c[u]);
        }
    }
    return sum;
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
        begin = __ldg(row_ptr + row);
        end = __ldg(row_ptr + row + 1);
    }
    const bool is_long = end - begin > LONG * lanes;

    // Every lane of the warp is still here, so full-warp votes and shuffles are safe.
    if (__ballot_sync(FULL, is_long)) {
        // Queue the long rows' segments: a warp scan of the segment counts gives each row its
        // slots, and one atomic per warp reserves them (one per row would serialise in L2).
        const int nseg = is_long && lane == 0 ? (end - begin + SEG - 1) / SEG : 0;
        int incl = nseg;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const int t = __shfl_up_sync(FULL, incl, d);
            if (warp_lane >= d) incl += t;
        }
        const int warp_total = __shfl_sync(FULL, incl, 31);
        int base = 0;
        if (warp_lane == 31) base = atomicAdd(task_count, warp_total);
        base = __shfl_sync(FULL, base, 31) + incl - nseg;
        if (nseg > 0) {
            y[row] = 0.0f;  // spmv_long adds into it
            for (int s = 0; s < nseg; ++s) {
                tasks[2 * (base + s)] = row;
                tasks[2 * (base + s) + 1] = s;
            }
        }
    }
    if (row >= m || is_long) return;  // whole groups leave together

    float sum = lane_dot(col_idx, vals, x, begin, end, lane, lanes);
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
        const int begin = __ldg(row_ptr + row) + tasks[2 * t + 1] * SEG;
        const int end = min(begin + SEG, __ldg(row_ptr + row + 1));
        float sum = lane_dot(col_idx, vals, x, begin, end, lane, 32);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(FULL, sum, off);
        if (lane == 0) y[row] += sum;
    }
}

// Barriers: missing between a write and the reads through it, of the wrong scope, missing after a
// cp.async, and inside a branch only part of the block takes. Each wrong kernel has a right twin.

// Stable partition of one block's 512 values, flagged ones first: each thread counts the flagged
// values before it (a loop as long as its index), places its index in perm, then every thread
// gathers through perm, last first.
extern "C" __global__ void partition_gather_nosync(const int* flag, const float* x, float* out) {
    __shared__ int perm[512];
    int t = threadIdx.x;
    int f = flag[t];
    int flagged = __syncthreads_count(f);
    int before = 0;
    for (int j = 0; j < t; j++) before += flag[j];
    perm[f ? before : flagged + t - before] = t;  // MARK perm-write
    out[t] = x[perm[511 - t]];  // MARK perm-read
}

extern "C" __global__ void partition_gather_sync(const int* flag, const float* x, float* out) {
    __shared__ int perm[512];
    int t = threadIdx.x;
    int f = flag[t];
    int flagged = __syncthreads_count(f);
    int before = 0;
    for (int j = 0; j < t; j++) before += flag[j];
    perm[f ? before : flagged + t - before] = t;
    __syncthreads();
    out[t] = x[perm[511 - t]];
}

// Rotate one block's values left by one through shared memory: thread 31 reads what thread 32
// (another warp) wrote, so the barrier needed is __syncthreads().
extern "C" __global__ void rotate_nosync(const float* x, float* out) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 128 + t];  // MARK rot-write
    out[blockIdx.x * 128 + t] = s[(t + 1) % 128];  // MARK rot-read
}

extern "C" __global__ void rotate_syncwarp(const float* x, float* out) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 128 + t];  // MARK rotw-write
    __syncwarp();
    out[blockIdx.x * 128 + t] = s[(t + 1) % 128];  // MARK rotw-read
}

extern "C" __global__ void rotate_sync(const float* x, float* out) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 128 + t];
    __syncthreads();
    out[blockIdx.x * 128 + t] = s[(t + 1) % 128];
}

// The last warp of a tree reduction unrolled without __syncwarp (pre-Volta code): the same-warp
// lanes are not in lockstep, so the barrier needed here is __syncwarp().
extern "C" __global__ void reduce_unrolled_nowarpsync(const float* x, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32) {
        volatile float* v = s;
        v[t] += v[t + 32];
        v[t] += v[t + 16];  // MARK unroll-read
        v[t] += v[t + 8];
        v[t] += v[t + 4];
        v[t] += v[t + 2];
        v[t] += v[t + 1];
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" __global__ void reduce_unrolled_warpsync(const float* x, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32) {
        float v = s[t] + s[t + 32];
        for (int k = 16; k > 0; k >>= 1) {
            s[t] = v;
            __syncwarp();
            v += s[t + k];
            __syncwarp();
        }
        if (t == 0) out[blockIdx.x] = v;
    }
}

// A tile staged with cp.async: the wrong one reads it before waiting for the copy.
__device__ void copy16(float* dst, const float* src) {
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d), "l"(src));
}

extern "C" __global__ void scale_tile_nowait(const float* x, float* out, float a) {
    __shared__ __align__(16) float tile[512];
    int t = threadIdx.x;
    copy16(&tile[4 * t], &x[blockIdx.x * 512 + 4 * t]);
    asm volatile("cp.async.commit_group;");
    __syncthreads();
    out[blockIdx.x * 512 + t] = a * tile[(t + 1) % 512];  // MARK cp-read
}

extern "C" __global__ void scale_tile_wait(const float* x, float* out, float a) {
    __shared__ __align__(16) float tile[512];
    int t = threadIdx.x;
    copy16(&tile[4 * t], &x[blockIdx.x * 512 + 4 * t]);
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 0;");
    __syncthreads();
    out[blockIdx.x * 512 + t] = a * tile[(t + 1) % 512];
}

// Reverse the first half of a block: the barrier sits inside the branch the first half takes,
// and the second half skips the branch and ends.
extern "C" __global__ void reverse_half_branch(const float* x, float* out, int half) {
    __shared__ float s[128];
    int t = threadIdx.x;
    if (t < half) {  // MARK branch-if
        s[t] = x[t];
        __syncthreads();  // MARK branch-bar
        out[t] = s[half - 1 - t];
    }
}

extern "C" __global__ void reverse_half_uniform(const float* x, float* out, int half) {
    __shared__ float s[128];
    int t = threadIdx.x;
    if (t < half) s[t] = x[t];
    __syncthreads();
    if (t < half) out[t] = s[half - 1 - t];
}

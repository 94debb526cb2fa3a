// Row softmax, four versions: thread per row, block per row with shared reductions, warp per row with
// the online (running max) form, and a cooperative-groups tile version reading with __ldcs.
#include "common.cuh"

__global__ void softmax_forward_kernel1(float* out, const float* inp, int N, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        const float* row = inp + i * C;
        float maxval = -INFINITY;
        for (int j = 0; j < C; j++) maxval = fmaxf(maxval, row[j]);
        double sum = 0.0;
        for (int j = 0; j < C; j++) { out[i * C + j] = expf(row[j] - maxval); sum += out[i * C + j]; }
        for (int j = 0; j < C; j++) out[i * C + j] /= (float)sum;
    }
}

__global__ void softmax_forward_kernel2(float* out, const float* inp, int N, int C) {
    extern __shared__ float shared[];
    int idx = blockIdx.x, tid = threadIdx.x, block_size = blockDim.x;
    const float* x = inp + idx * C;
    float maxval = -INFINITY;
    for (int i = tid; i < C; i += block_size) maxval = fmaxf(maxval, x[i]);
    shared[tid] = maxval;
    __syncthreads();
    for (int stride = block_size / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (tid < stride) shared[tid] = fmaxf(shared[tid], shared[tid + stride]);
    }
    __syncthreads();
    float offset = shared[0];
    for (int i = tid; i < C; i += block_size) out[idx * C + i] = expf(x[i] - offset);
    __syncthreads();
    x = out + idx * C;
    float sumval = 0.0f;
    for (int i = tid; i < C; i += block_size) sumval += x[i];
    shared[tid] = sumval;
    __syncthreads();
    for (int stride = block_size / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (tid < stride) shared[tid] += shared[tid + stride];
    }
    __syncthreads();
    float sum = shared[0];
    for (int i = tid; i < C; i += block_size) out[idx * C + i] = x[i] / sum;
}

__global__ void softmax_forward_online_kernel3(float* out, const float* inp, int N, int C) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N) return;
    const float* x = inp + row * C;
    float m = -INFINITY, d = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float v = x[i], mn = fmaxf(m, v);
        d = d * expf(m - mn) + expf(v - mn);
        m = mn;
    }
    for (int off = 16; off > 0; off >>= 1) {  // merge (max, denominator) pairs across the warp
        float mo = __shfl_xor_sync(0xffffffff, m, off), dd = __shfl_xor_sync(0xffffffff, d, off);
        float mn = fmaxf(m, mo);
        d = d * expf(m - mn) + dd * expf(mo - mn);
        m = mn;
    }
    for (int i = lane; i < C; i += 32) out[row * C + i] = expf(x[i] - m) / d;
}

__global__ void softmax_forward_kernel4(float* out, const float* inp, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (idx >= N) return;
    const float* x = inp + idx * C;
    float maxval = -INFINITY;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) maxval = fmaxf(maxval, x[i]);
    maxval = cg::reduce(warp, maxval, cg::greater<float>{});
    float sumval = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) sumval += expf(__ldcs(x + i) - maxval);
    sumval = cg::reduce(warp, sumval, cg::plus<float>{});
    for (int i = warp.thread_rank(); i < C; i += warp.size()) __stcs(out + idx * C + i, expf(x[i] - maxval) / sumval);
}

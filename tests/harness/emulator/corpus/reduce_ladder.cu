// A reduction ladder: the classic seven steps from interleaved addressing to multiple elements per
// thread, with the block size a template parameter, then cooperative groups and a single-pass
// version where the last block (threadfence + ticket) adds up the partial sums.
#include "common.cuh"

// reduce0: interleaved addressing, divergent modulo test
__global__ void reduce0(const int* g_idata, int* g_odata, unsigned int n) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if ((tid % (2 * s)) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// reduce1: interleaved addressing, strided index (bank conflicts instead of divergence)
__global__ void reduce1(const int* g_idata, int* g_odata, unsigned int n) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// reduce2: sequential addressing
__global__ void reduce2(const int* g_idata, int* g_odata, unsigned int n) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// reduce3: first add during the global load (half the blocks)
__global__ void reduce3(const int* g_idata, int* g_odata, unsigned int n) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x, i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    int mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

// the last warp without __syncthreads: __syncwarp between steps (lanes are independent since Volta)
template <unsigned int blockSize>
__device__ void warpReduce(int* sdata, unsigned int tid) {
    int v = sdata[tid];
    for (int off = (blockSize >= 64 ? 32 : blockSize / 2); off > 0; off >>= 1) {
        v += sdata[tid + off];
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }
}

// reduce4: unroll the last warp
template <unsigned int blockSize>
__global__ void reduce4(const int* g_idata, int* g_odata, unsigned int n) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x, i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    int mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockSize < n) mySum += g_idata[i + blockSize];
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockSize / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) warpReduce<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
template __global__ void reduce4<128>(const int*, int*, unsigned int);

// reduce5: completely unrolled with the block size known at compile time
template <unsigned int blockSize>
__global__ void reduce5(const int* g_idata, int* g_odata, unsigned int n) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x, i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    int mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockSize < n) mySum += g_idata[i + blockSize];
    sdata[tid] = mySum;
    __syncthreads();
    if (blockSize >= 512) { if (tid < 256) sdata[tid] = mySum = mySum + sdata[tid + 256]; __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) sdata[tid] = mySum = mySum + sdata[tid + 128]; __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) sdata[tid] = mySum = mySum + sdata[tid + 64]; __syncthreads(); }
    if (tid < 32) {
        if (blockSize >= 64) mySum += sdata[tid + 32];
        for (int offset = warpSize / 2; offset > 0; offset /= 2) mySum += __shfl_down_sync(0xffffffff, mySum, offset);
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}
template __global__ void reduce5<256>(const int*, int*, unsigned int);
template __global__ void reduce5<64>(const int*, int*, unsigned int);

// reduce6: many elements per thread, grid-stride, nIsPow2 specialisation
template <unsigned int blockSize, bool nIsPow2>
__global__ void reduce6(const int* g_idata, int* g_odata, unsigned int n) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x, gridSize = blockSize * 2 * gridDim.x;
    int mySum = 0;
    unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
    while (i < n) {
        mySum += g_idata[i];
        if (nIsPow2 || i + blockSize < n) mySum += g_idata[i + blockSize];
        i += gridSize;
    }
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockSize / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        mySum += sdata[tid + 32];
        for (int offset = 16; offset > 0; offset /= 2) mySum += __shfl_down_sync(0xffffffff, mySum, offset);
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}
template __global__ void reduce6<128, true>(const int*, int*, unsigned int);
template __global__ void reduce6<128, false>(const int*, int*, unsigned int);

// cooperative groups: thread_block_tile reduce, one atomicAdd per tile
__global__ void reduce_cg_atomic(const float* in, float* out, int n) {
    auto block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    float v = 0.0f;
    for (int i = block.group_index().x * block.size() + block.thread_rank(); i < n; i += gridDim.x * block.size()) v += in[i];
    v = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) atomicAdd(out, v);
}

// single pass: each block writes its partial, the last block to finish adds the partials
__device__ unsigned int retirementCount = 0;
__global__ void reduceSinglePass(const float* in, float* partials, float* out, unsigned int n) {
    __shared__ float sdata[256];
    __shared__ bool amLast;
    float v = 0.0f;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
    v = block_sum(v);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        __threadfence();  // the partial is visible before the ticket says so
        unsigned int ticket = atomicInc(&retirementCount, gridDim.x);
        amLast = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (amLast) {
        float s = 0.0f;
        for (unsigned int i = threadIdx.x; i < gridDim.x; i += blockDim.x) s += partials[i];
        sdata[threadIdx.x] = s;
        __syncthreads();
        for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
            if (threadIdx.x < k) sdata[threadIdx.x] += sdata[threadIdx.x + k];
            __syncthreads();
        }
        if (threadIdx.x == 0) { *out = sdata[0]; retirementCount = 0; }
    }
}

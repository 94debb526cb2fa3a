// Harris #5 made correct for Volta+: the last warp unrolls with __syncwarp between steps.
#define BLOCK 256

__device__ void warp_reduce(volatile float* s, unsigned tid) {
    float v = s[tid];
    v += s[tid + 32]; __syncwarp(); s[tid] = v; __syncwarp();
    v += s[tid + 16]; __syncwarp(); s[tid] = v; __syncwarp();
    v += s[tid + 8];  __syncwarp(); s[tid] = v; __syncwarp();
    v += s[tid + 4];  __syncwarp(); s[tid] = v; __syncwarp();
    v += s[tid + 2];  __syncwarp(); s[tid] = v; __syncwarp();
    v += s[tid + 1];  __syncwarp(); s[tid] = v;
}

extern "C" __global__ void reduce(const float* __restrict__ x, float* out, int n) {
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (BLOCK * 2) + tid;
    float sum = 0.0f;
    if (i < n) sum = x[i];
    if (i + BLOCK < n) sum += x[i + BLOCK];
    s[tid] = sum;
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 32; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid < 32) warp_reduce(s, tid);
    if (tid == 0) atomicAdd(out, s[0]);
}

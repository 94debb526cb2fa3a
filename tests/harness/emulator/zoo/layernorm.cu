// LayerNorm forward, one block per row: two shared-memory reductions (mean, then variance).
#define THREADS 256

__device__ float block_sum(float v, float* s) {
    s[threadIdx.x] = v;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    float total = s[0];
    __syncthreads();  // everyone has read s[0] before the buffer is reused
    return total;
}

extern "C" __global__ void layernorm(const float* x, const float* gamma, const float* beta, float* y,
                                     int cols, float eps) {
    __shared__ float s[THREADS];
    const float* in = x + (size_t)blockIdx.x * cols;
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += THREADS) sum += in[c];
    float mean = block_sum(sum, s) / cols;
    float sq = 0.0f;
    for (int c = threadIdx.x; c < cols; c += THREADS) {
        float d = in[c] - mean;
        sq += d * d;
    }
    float rstd = rsqrtf(block_sum(sq, s) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += THREADS)
        y[(size_t)blockIdx.x * cols + c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
}

// Design: one 256-thread block per row; shared-memory tree for the max, again for the sum, then the write (three reads of the row).
extern "C" __global__ void softmax(const float* x, float* y, int R, int C)
{
    __shared__ float s[256];
    const float* row = x + (size_t)blockIdx.x * C;
    float* out = y + (size_t)blockIdx.x * C;
    int tid = threadIdx.x;
    float mx = -1e30f;
    for (int c = tid; c < C; c += blockDim.x) mx = fmaxf(mx, row[c]);
    s[tid] = mx;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (tid < st) s[tid] = fmaxf(s[tid], s[tid + st]);
        __syncthreads();
    }
    mx = s[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = tid; c < C; c += blockDim.x) sum += expf(row[c] - mx);
    s[tid] = sum;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    sum = s[0];
    for (int c = tid; c < C; c += blockDim.x) out[c] = expf(row[c] - mx) / sum;
}

// Design: one 1024-thread block per row; max and sum combined with atomics on shared words; thread 0 counts the valid rows serially.
__device__ int ordered(float f) { int i = __float_as_int(f); return i >= 0 ? i : i ^ 0x7fffffff; }
__device__ float unordered(int i) { return __int_as_float(i >= 0 ? i : i ^ 0x7fffffff); }
extern "C" __global__ void cross_entropy(const float* logits, const int* targets, float* loss, float* dlogits,
                                         int N, int V, int ignore_index)
{
    __shared__ int smax, svalid;
    __shared__ float ssum;
    int r = blockIdx.x;
    const float* row = logits + (size_t)r * V;
    float* grad = dlogits + (size_t)r * V;
    int t = targets[r];
    if (t == ignore_index) {
        for (int j = threadIdx.x; j < V; j += blockDim.x) grad[j] = 0.0f;
        if (threadIdx.x == 0) loss[r] = 0.0f;
        return;
    }
    if (threadIdx.x == 0) {
        int c = 0;
        for (int i = 0; i < N; i++) c += targets[i] != ignore_index;
        svalid = c;
        smax = ordered(-1e30f);
        ssum = 0.0f;
    }
    __syncthreads();
    float m = -1e30f;
    for (int j = threadIdx.x; j < V; j += blockDim.x) m = fmaxf(m, row[j]);
    atomicMax(&smax, ordered(m));
    __syncthreads();
    m = unordered(smax);
    float s = 0.0f;
    for (int j = threadIdx.x; j < V; j += blockDim.x) s += expf(row[j] - m);
    atomicAdd(&ssum, s);
    __syncthreads();
    s = ssum;
    float inv = 1.0f / (float)svalid;
    for (int j = threadIdx.x; j < V; j += blockDim.x) grad[j] = (expf(row[j] - m) / s - (j == t ? 1.0f : 0.0f)) * inv;
    if (threadIdx.x == 0) loss[r] = m + logf(s) - row[t];
}

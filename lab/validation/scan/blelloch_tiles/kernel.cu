// Design: Blelloch up-sweep/down-sweep scan of 512-element tiles (256 threads, two elements each, bank conflicts unpadded), recursive tile totals.
#define T 512
extern "C" __global__ void scan_tiles(const int* x, int* y, int* sums, int n)
{
    __shared__ unsigned int s[T];
    int base = blockIdx.x * T, tid = threadIdx.x;
    s[2 * tid] = base + 2 * tid < n ? (unsigned int)x[base + 2 * tid] : 0u;
    s[2 * tid + 1] = base + 2 * tid + 1 < n ? (unsigned int)x[base + 2 * tid + 1] : 0u;
    int off = 1;
    for (int d = T / 2; d > 0; d /= 2) {
        __syncthreads();
        if (tid < d) { int a = off * (2 * tid + 1) - 1, b = off * (2 * tid + 2) - 1; s[b] += s[a]; }
        off *= 2;
    }
    __syncthreads();
    unsigned int total = s[T - 1];
    __syncthreads();
    if (tid == 0) s[T - 1] = 0;
    for (int d = 1; d < T; d *= 2) {
        off /= 2;
        __syncthreads();
        if (tid < d) {
            int a = off * (2 * tid + 1) - 1, b = off * (2 * tid + 2) - 1;
            unsigned int t = s[a]; s[a] = s[b]; s[b] += t;
        }
    }
    __syncthreads();
    // exclusive -> inclusive: add the element itself
    if (base + 2 * tid < n) y[base + 2 * tid] = (int)(s[2 * tid] + (unsigned int)x[base + 2 * tid]);
    if (base + 2 * tid + 1 < n) y[base + 2 * tid + 1] = (int)(s[2 * tid + 1] + (unsigned int)x[base + 2 * tid + 1]);
    if (tid == 0) sums[blockIdx.x] = (int)total;
}
extern "C" __global__ void add_offsets(int* y, const int* sums, int n)
{
    int i = blockIdx.x * T + threadIdx.x;
    if (blockIdx.x == 0) return;
    unsigned int add = (unsigned int)sums[blockIdx.x - 1];
    if (i < n) y[i] = (int)((unsigned int)y[i] + add);
    if (i + T / 2 < n) y[i + T / 2] = (int)((unsigned int)y[i + T / 2] + add);
}

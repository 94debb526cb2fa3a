// Blelloch work-efficient scan: up-sweep and down-sweep over 2*blockDim elements per block
// (exclusive), turned inclusive on the way out; block totals scanned by a second launch.
#define THREADS 128
#define TILE (2 * THREADS)

extern "C" __global__ void blelloch(const int* in, int* out, int* sums, int n) {
    __shared__ int t[TILE];
    int tid = threadIdx.x;
    int base = blockIdx.x * TILE;
    int a = base + 2 * tid, b = base + 2 * tid + 1;
    int va = a < n ? in[a] : 0, vb = b < n ? in[b] : 0;
    t[2 * tid] = va;
    t[2 * tid + 1] = vb;
    int offset = 1;
    for (int d = TILE >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            t[bi] += t[ai];
        }
        offset *= 2;
    }
    if (tid == 0) {
        if (sums) sums[blockIdx.x] = t[TILE - 1];
        t[TILE - 1] = 0;
    }
    for (int d = 1; d < TILE; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            int tmp = t[ai];
            t[ai] = t[bi];
            t[bi] += tmp;
        }
    }
    __syncthreads();
    if (a < n) out[a] = t[2 * tid] + va;
    if (b < n) out[b] = t[2 * tid + 1] + vb;
}

extern "C" __global__ void add_sums(int* out, const int* scanned, int n) {
    int i = blockIdx.x * TILE + threadIdx.x;
    if (blockIdx.x == 0) return;
    int add = scanned[blockIdx.x - 1];
    if (i < n) out[i] += add;
    if (i + THREADS < n) out[i + THREADS] += add;
}

// Design: one 1024-thread block per row sorts the whole row in shared memory (bitonic sort of 64-bit keys: ordered value, index), then writes the first k; rows too long for shared memory sort in a global scratch buffer instead.
__device__ void sort_row(const float* row, unsigned long long* keys, float* values, int* indices, int L, int k, int P)
{
    for (int j = threadIdx.x; j < P; j += blockDim.x) {
        if (j < L) {
            unsigned int u = __float_as_uint(row[j]);
            u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // ascending order of the floats
            keys[j] = ((unsigned long long)(~u) << 32) | (unsigned int)j;  // ascending key = descending value, then index
        } else {
            keys[j] = ~0ull;
        }
    }
    __syncthreads();
    for (int size = 2; size <= P; size *= 2) {
        for (int stride = size / 2; stride > 0; stride /= 2) {
            for (int j = threadIdx.x; j < P; j += blockDim.x) {
                int partner = j ^ stride;
                if (partner > j) {
                    bool up = (j & size) == 0;
                    unsigned long long a = keys[j], b = keys[partner];
                    if ((a > b) == up) { keys[j] = b; keys[partner] = a; }
                }
            }
            __syncthreads();
        }
    }
    for (int j = threadIdx.x; j < k; j += blockDim.x) {
        int i = (int)(keys[j] & 0xffffffffu);
        values[(size_t)blockIdx.x * k + j] = row[i];
        indices[(size_t)blockIdx.x * k + j] = i;
    }
}
extern "C" __global__ void topk_sort(const float* x, float* values, int* indices, int L, int k, int P)
{
    extern __shared__ unsigned long long keys[];
    sort_row(x + (size_t)blockIdx.x * L, keys, values, indices, L, k, P);
}
extern "C" __global__ void topk_sort_global(const float* x, float* values, int* indices, int L, int k, int P,
                                            unsigned long long* scratch)
{
    sort_row(x + (size_t)blockIdx.x * L, scratch + (size_t)blockIdx.x * P, values, indices, L, k, P);
}

// Design: each thread owns a contiguous chunk of 32 elements (uncoalesced): sum the chunks, scan the chunk totals recursively, rescan each chunk from its offset.
#define CHUNK 32
extern "C" __global__ void chunk_sums(const int* x, int* sums, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    long long start = (long long)t * CHUNK;
    if (start >= n) return;
    unsigned int s = 0;
    for (int j = 0; j < CHUNK && start + j < n; j++) s += (unsigned int)x[start + j];
    sums[t] = (int)s;
}
extern "C" __global__ void chunk_scan(const int* x, int* y, const int* scanned, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    long long start = (long long)t * CHUNK;
    if (start >= n) return;
    unsigned int s = t > 0 ? (unsigned int)scanned[t - 1] : 0u;
    for (int j = 0; j < CHUNK && start + j < n; j++) { s += (unsigned int)x[start + j]; y[start + j] = (int)s; }
}

// Dynamic shared memory (extern __shared__): reverse each block's chunk in place.
extern "C" __global__ void reverse_chunks(int* a, int n) {
    extern __shared__ int chunk[];
    int base = blockIdx.x * blockDim.x;
    int len = min((int)blockDim.x, n - base);
    int t = threadIdx.x;
    if (t < len) chunk[t] = a[base + t];
    __syncthreads();
    if (t < len) a[base + t] = chunk[len - 1 - t];
}

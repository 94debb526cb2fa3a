// Inter-block hand-off: block 0 produces a value and raises a flag; every other block spins on the
// flag (volatile load) before consuming. Needs the scheduler to rotate fairly between blocks.
extern "C" __global__ void handoff(volatile int* flag, int* data, int* out, int seed) {
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) {
            data[0] = seed * 3 + 1;
            __threadfence();
            atomicExch((int*)flag, 1);
        }
        return;
    }
    if (threadIdx.x == 0) {
        while (*flag == 0) { }
        __threadfence();
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = ((volatile int*)data)[0] + (int)blockIdx.x;
}

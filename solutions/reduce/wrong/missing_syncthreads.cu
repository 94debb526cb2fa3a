// kata-expect: race-raw
// The shared-memory tree reads a neighbour's partial sum before any barrier publishes it; lockstep hides it, hardware does not.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float s[1024];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        sum += x[i];
    }
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step >>= 1) {
        if (threadIdx.x < step) {
            s[threadIdx.x] += s[threadIdx.x + step];
        }
        // missing: __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(out, s[0]);
    }
}
// full file: a race needs the shared-memory tree; the solution reduces with shuffles and has no tree to race in.

// 1-D convolution with an initialised __constant__ filter and a shared tile with halos.
#define R 3
#define BLOCK 128
__constant__ float filt[2 * R + 1] = {0.05f, -0.25f, 0.5f, 1.0f, 0.5f, -0.25f, 0.05f};
__device__ int calls = 0;  // a module-level global with an initialiser

extern "C" __global__ void conv1d(const float* x, float* y, int n) {
    __shared__ float tile[BLOCK + 2 * R];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    tile[threadIdx.x + R] = i < n ? x[i] : 0.0f;
    if (threadIdx.x < R) {
        int left = i - R, right = i + BLOCK;
        tile[threadIdx.x] = left >= 0 && left < n ? x[left] : 0.0f;
        tile[threadIdx.x + BLOCK + R] = right < n ? x[right] : 0.0f;
    }
    __syncthreads();
    if (i < n) {
        float acc = 0.0f;
        for (int k = -R; k <= R; ++k) acc += filt[k + R] * tile[threadIdx.x + R + k];
        y[i] = acc;
    }
    if (threadIdx.x == 0) atomicAdd(&calls, 1);
}

extern "C" __global__ void read_calls(int* out) { *out = calls; }

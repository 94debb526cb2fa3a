// kata-expect: wrong-answer
// Each thread handles one float4 and stops, but the plan's grid is capped at 8 blocks per SM, so past 1056 x 256 float4s (n = 1081348) nothing is written.
// c = a + b at memory speed: float4 loads and stores in a grid-stride loop, then the n % 4 tail.
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;

    // float4: one 16-byte load per thread gives a warp 512 contiguous bytes per instruction (four
    // full 128-byte lines), a quarter of the instructions of scalar code. Device allocations are
    // 256-byte aligned, so the arrays reinterpreted as float4 are aligned.
    const int n4 = n / 4;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);
    // Grid-stride: the grid is sized to the GPU, not to n, so any n is covered with any grid.
    // Neighbouring threads take neighbouring float4s: every load and store is coalesced.
    if (int i = tid; i < n4) {
        const float4 x = a4[i];
        const float4 y = b4[i];
        c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    // The n % 4 elements past the last whole float4 (all of them when n < 4).
    for (int i = 4 * n4 + tid; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

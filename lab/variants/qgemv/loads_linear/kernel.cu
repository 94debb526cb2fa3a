// Loads only (no arithmetic, output garbage): each 256-thread block reads its 16-row tile (16 rows
// are contiguous) in memory order, 8 uint4 a thread in flight.
extern "C" __global__ void __launch_bounds__(256)
qgemv(const int* __restrict__ Wq, const void* scales, const void* x, float* __restrict__ y, int N, int K)
{
    const size_t n4 = (size_t)16 * K / 32;  // uint4 of the tile
    const uint4* p = reinterpret_cast<const uint4*>(Wq) + blockIdx.x * n4 + threadIdx.x;
    unsigned acc = 0;
    for (size_t i = 0; i < n4; i += 8 * 256) {
        uint4 a[8];
#pragma unroll
        for (int u = 0; u < 8; u++) a[u] = __ldcs(p + i + u * 256);
#pragma unroll
        for (int u = 0; u < 8; u++) acc ^= a[u].x ^ a[u].y ^ a[u].z ^ a[u].w;
    }
    if (acc == 0x9E3779B9u) y[0] = acc;
}

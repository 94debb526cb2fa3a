// Loads only (no arithmetic, output garbage): the solution's access pattern. A 16-row tile per
// 256-thread block, warp w takes groups w, w+8, ...; lane (g, t) reads 16 B of rows g and g+8 at
// uint4 4*grp + t; 4 groups (8 uint4) a lane in flight a round.
extern "C" __global__ void __launch_bounds__(256)
qgemv(const int* __restrict__ Wq, const void* scales, const void* x, float* __restrict__ y, int N, int K)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const int r0 = blockIdx.x * 16 + g, words = K / 8, ngroups = words / 16;
    const uint4* qa = reinterpret_cast<const uint4*>(Wq + (size_t)r0 * words) + t;
    const uint4* qb = reinterpret_cast<const uint4*>(Wq + (size_t)(r0 + 8) * words) + t;
    unsigned acc = 0;
    for (int base = 0; base < ngroups; base += 32) {
        uint4 a[4], b[4];
#pragma unroll
        for (int u = 0; u < 4; u++) { const int grp = base + u * 8 + warp; a[u] = __ldcs(qa + 4 * grp); b[u] = __ldcs(qb + 4 * grp); }
#pragma unroll
        for (int u = 0; u < 4; u++) acc ^= a[u].x ^ a[u].y ^ a[u].z ^ a[u].w ^ b[u].x ^ b[u].y ^ b[u].z ^ b[u].w;
    }
    if (acc == 0x9E3779B9u) y[0] = acc;
}

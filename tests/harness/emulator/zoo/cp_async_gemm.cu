// Double-buffered tiled SGEMM with cp.async: while the block multiplies one 16x16 tile pair, the
// next pair is in flight into the other buffer. Edge elements are zero-filled by the copy itself
// (src-size 0), so the source pointer is clamped into the matrix.
#define T 16

__device__ void copy4(float* dst, const float* src, bool inside) {
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(d), "l"(src), "r"(inside ? 4 : 0));
}

extern "C" __global__ void sgemm_async(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[2][T][T], Bs[2][T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    int tiles = (K + T - 1) / T;
    auto load = [&](int tile, int buf) {
        int ka = tile * T + tx, kb = tile * T + ty;
        bool ina = row < M && ka < K, inb = kb < K && col < N;
        copy4(&As[buf][ty][tx], ina ? &A[(size_t)row * K + ka] : A, ina);
        copy4(&Bs[buf][ty][tx], inb ? &B[(size_t)kb * N + col] : B, inb);
        asm volatile("cp.async.commit_group;");
    };
    float acc = 0.0f;
    load(0, 0);
    for (int t = 0; t < tiles; t++) {
        int buf = t & 1;
        if (t + 1 < tiles) {
            load(t + 1, buf ^ 1);
            asm volatile("cp.async.wait_group 1;");  // all but the newest group have landed
        } else {
            asm volatile("cp.async.wait_group 0;");
        }
        __syncthreads();
        for (int k = 0; k < T; k++) acc += As[buf][ty][k] * Bs[buf][k][tx];
        __syncthreads();  // the buffer is refilled by the next iteration's copy
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

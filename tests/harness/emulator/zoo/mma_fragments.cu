// mma.sync with fragments loaded straight from global memory by the PTX ISA's fragment tables
// (groupID = lane / 4, threadID_in_group = lane % 4), one warp per 16x8 tile of C, any M, N, K:
// bf16 m16n8k16 -> f32, tf32 m16n8k8 -> f32, s8 m16n8k32 -> s32, and f16 m16n8k16 -> f16 with
// its C tile written back through stmatrix.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T> __device__ T at(const T* X, int r, int c, int R, int C) {
    return (r < R && c < C) ? X[(size_t)r * C + c] : T(0);
}
__device__ unsigned pack2(unsigned short lo, unsigned short hi) { return lo | ((unsigned)hi << 16); }

extern "C" __global__ void bf16_k16(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K) {
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
    const unsigned short* a = reinterpret_cast<const unsigned short*>(A);
    const unsigned short* b = reinterpret_cast<const unsigned short*>(B);
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k0 = 0; k0 < K; k0 += 16) {
        unsigned ra[4], rb[2];
        for (int i = 0; i < 4; i++) {  // a0..a7: rows g, g+8; columns 2t, 2t+1, then 8 more
            int r = m0 + g + 8 * (i % 2), c = k0 + 2 * t + 8 * (i / 2);
            ra[i] = pack2(at(a, r, c, M, K), at(a, r, c + 1, M, K));
        }
        for (int i = 0; i < 2; i++) {  // b0..b3: rows (k) 2t, 2t+1, then 8 more; column g
            int k = k0 + 2 * t + 8 * i, c = n0 + g;
            rb[i] = pack2(at(b, k, c, K, N), at(b, k + 1, c, K, N));
        }
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    }
    for (int i = 0; i < 4; i++) {  // c0..c3: rows g, g+8; columns 2t, 2t+1
        int r = m0 + g + 8 * (i / 2), c = n0 + 2 * t + i % 2;
        if (r < M && c < N) C[(size_t)r * N + c] = d[i];
    }
}

extern "C" __global__ void tf32_k8(const float* A, const float* B, float* C, int M, int N, int K) {
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k0 = 0; k0 < K; k0 += 8) {
        unsigned ra[4], rb[2];
        for (int i = 0; i < 4; i++) {  // a0..a3: rows g, g+8; columns t, t+4
            float v = at(A, m0 + g + 8 * (i % 2), k0 + t + 4 * (i / 2), M, K);
            asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(ra[i]) : "f"(v));
        }
        for (int i = 0; i < 2; i++) {  // b0, b1: rows t, t+4; column g
            float v = at(B, k0 + t + 4 * i, n0 + g, K, N);
            asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(rb[i]) : "f"(v));
        }
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    }
    for (int i = 0; i < 4; i++) {
        int r = m0 + g + 8 * (i / 2), c = n0 + 2 * t + i % 2;
        if (r < M && c < N) C[(size_t)r * N + c] = d[i];
    }
}

extern "C" __global__ void s8_k32(const signed char* A, const signed char* B, int* C, int M, int N, int K) {
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
    int d[4] = {0, 0, 0, 0};
    for (int k0 = 0; k0 < K; k0 += 32) {
        unsigned ra[4] = {0, 0, 0, 0}, rb[2] = {0, 0};
        for (int i = 0; i < 4; i++)  // a0..a15: rows g, g+8; columns 4t..4t+3, then 16 more
            for (int j = 0; j < 4; j++) {
                int r = m0 + g + 8 * (i % 2), c = k0 + 4 * t + j + 16 * (i / 2);
                ra[i] |= (unsigned)(unsigned char)at(A, r, c, M, K) << (8 * j);
            }
        for (int i = 0; i < 2; i++)  // b0..b7: rows (k) 4t..4t+3, then 16 more; column g
            for (int j = 0; j < 4; j++)
                rb[i] |= (unsigned)(unsigned char)at(B, k0 + 4 * t + j + 16 * i, n0 + g, K, N) << (8 * j);
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};" : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    }
    for (int i = 0; i < 4; i++) {
        int r = m0 + g + 8 * (i / 2), c = n0 + 2 * t + i % 2;
        if (r < M && c < N) C[(size_t)r * N + c] = d[i];
    }
}

extern "C" __global__ void f16_k16_f16acc(const __half* A, const __half* B, __half* C, int M, int N, int K) {
    __shared__ __align__(16) unsigned short tile[16][8];
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
    const unsigned short* a = reinterpret_cast<const unsigned short*>(A);
    const unsigned short* b = reinterpret_cast<const unsigned short*>(B);
    unsigned d[2] = {0, 0};
    for (int k0 = 0; k0 < K; k0 += 16) {
        unsigned ra[4], rb[2];
        for (int i = 0; i < 4; i++) {
            int r = m0 + g + 8 * (i % 2), c = k0 + 2 * t + 8 * (i / 2);
            ra[i] = pack2(at(a, r, c, M, K), at(a, r, c + 1, M, K));
        }
        for (int i = 0; i < 2; i++) {
            int k = k0 + 2 * t + 8 * i, c = n0 + g;
            rb[i] = pack2(at(b, k, c, K, N), at(b, k + 1, c, K, N));
        }
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                     : "+r"(d[0]), "+r"(d[1]) : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    }
    // the f16 C fragment is the ldmatrix layout of two 8x8 matrices (rows 0-7, rows 8-15)
    unsigned addr = (unsigned)__cvta_generic_to_shared(&tile[lane % 16][0]);
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1,%2};" :: "r"(addr), "r"(d[0]), "r"(d[1]) : "memory");
    __syncwarp();
    for (int i = lane; i < 64; i += 32) {  // two halves a thread: whole 4-byte words
        int r = i / 4, c = 2 * (i % 4);
        unsigned short* out = reinterpret_cast<unsigned short*>(C);
        if (m0 + r < M && n0 + c < N) out[(size_t)(m0 + r) * N + n0 + c] = tile[r][c];
        if (m0 + r < M && n0 + c + 1 < N) out[(size_t)(m0 + r) * N + n0 + c + 1] = tile[r][c + 1];
    }
}

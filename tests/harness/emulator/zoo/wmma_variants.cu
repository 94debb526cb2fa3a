// wmma beyond bf16 -> f32, straight from global memory (one warp per 16x16 tile of C; matrices
// padded to whole tiles, with leading dimensions larger than the data):
//   f16 inputs with A column-major and an f16 accumulator that starts from C (C += A·B),
//   s8 inputs into s32, and tf32 (m16n16k8) into f32.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

extern "C" __global__ void f16_acc(const half* At, const half* B, half* C, int K, int lda, int ldb, int ldc) {
    int tm = blockIdx.y * 16, tn = blockIdx.x * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::col_major> a;  // At holds A transposed
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, half> c;
    wmma::load_matrix_sync(c, C + (size_t)tm * ldc + tn, ldc, wmma::mem_row_major);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, At + (size_t)k * lda + tm, lda);
        wmma::load_matrix_sync(b, B + (size_t)k * ldb + tn, ldb);
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(C + (size_t)tm * ldc + tn, c, ldc, wmma::mem_row_major);
}

extern "C" __global__ void s8_s32(const signed char* A, const signed char* Bt, int* C, int K, int lda, int ldb, int ldc) {
    int tm = blockIdx.y * 16, tn = blockIdx.x * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> b;  // Bt holds B transposed
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> c;
    wmma::fill_fragment(c, 0);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + (size_t)tm * lda + k, lda);
        wmma::load_matrix_sync(b, Bt + (size_t)tn * ldb + k, ldb);
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(C + (size_t)tn * ldc + tm, c, ldc, wmma::mem_col_major);  // C column-major
}

extern "C" __global__ void tf32_f32(const float* A, const float* B, float* C, int K, int lda, int ldb, int ldc) {
    int tm = blockIdx.y * 16, tn = blockIdx.x * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> c;
    wmma::fill_fragment(c, 0.0f);
    for (int k = 0; k < K; k += 8) {
        wmma::load_matrix_sync(a, A + (size_t)tm * lda + k, lda);
        wmma::load_matrix_sync(b, B + (size_t)k * ldb + tn, ldb);
        for (int i = 0; i < a.num_elements; i++) a.x[i] = wmma::__float_to_tf32(a.x[i]);
        for (int i = 0; i < b.num_elements; i++) b.x[i] = wmma::__float_to_tf32(b.x[i]);
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(C + (size_t)tm * ldc + tn, c, ldc, wmma::mem_row_major);
}

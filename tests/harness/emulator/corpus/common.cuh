// Shared helpers of the corpus, in the style of LLM-training code: a floatX switch, 16-byte packs
// loaded with streaming cache hints, warp reductions. Every kernel file includes it.
#pragma once
#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

#define WARP_SIZE 32
#ifndef INFINITY  // NVRTC has no math.h
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

// 16 bytes of T, moved as one int4 so the compiler emits a single 128-bit access.
template <class T>
struct alignas(16) Pack16 {
    static constexpr int size = 16 / sizeof(T);
    T v[size];
    __device__ T& operator[](int i) { return v[i]; }
    __device__ const T& operator[](int i) const { return v[i]; }
    __device__ static Pack16 zeros() { Pack16 p; *reinterpret_cast<int4*>(p.v) = make_int4(0, 0, 0, 0); return p; }
};
template <class T> __device__ Pack16<T> load16(const T* p) { Pack16<T> r; *reinterpret_cast<int4*>(r.v) = *reinterpret_cast<const int4*>(p); return r; }
template <class T> __device__ Pack16<T> load16_cs(const T* p) { Pack16<T> r; *reinterpret_cast<int4*>(r.v) = __ldcs(reinterpret_cast<const int4*>(p)); return r; }
template <class T> __device__ void store16(T* p, const Pack16<T>& x) { *reinterpret_cast<int4*>(p) = *reinterpret_cast<const int4*>(x.v); }
template <class T> __device__ void store16_cs(T* p, const Pack16<T>& x) { __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(x.v)); }

__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, off));
    return v;
}
// Block-wide sum for blockDim.x a multiple of 32 (at most 1024); every thread gets the total.
__device__ float block_sum(float v) {
    __shared__ float parts[WARP_SIZE];
    int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE, nw = blockDim.x / WARP_SIZE;
    v = warp_sum(v);
    if (lane == 0) parts[warp] = v;
    __syncthreads();
    v = lane < nw ? parts[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();  // parts may be reused by the next call
    return v;
}

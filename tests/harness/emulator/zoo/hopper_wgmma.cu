// wgmma.mma_async on one warpgroup (128 threads), m64n16: the host lays A and B out in a shared-
// memory image (every swizzle, K- and MN-major) and gives the descriptors' fixed bits; the kernel
// copies the image in, adds the image's address, and runs two wgmmas (two k steps) onto C.
__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ unsigned long long desc(unsigned long long fixed, unsigned addr) {
    return fixed | (unsigned long long)((addr >> 4) & 0x3FFF);
}

struct Step { unsigned long long a_fixed, b_fixed; unsigned a_off[2], b_off[2]; };

#define D8 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])

template <int TA, int TB>
__device__ void mma_bf16(float* d, unsigned long long a, unsigned long long b) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, %10, %11; }"
                 : D8 : "l"(a), "l"(b), "n"(TA), "n"(TB));
}

__device__ void mma_tf32(float* d, unsigned long long a, unsigned long long b) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1; }"
                 : D8 : "l"(a), "l"(b));
}

__device__ void mma_e4m3(float* d, unsigned long long a, unsigned long long b) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e5m2 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1; }"
                 : D8 : "l"(a), "l"(b));
}

__device__ void mma_f16_rega(float* d, const unsigned* a, unsigned long long b) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, p, 1, -1, 0; }"
                 : D8 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

template <int KIND>
__device__ void run(const uint4* img, int img_words, const Step* st, const float* c, const unsigned* areg, float* out) {
    __shared__ __align__(1024) uint4 smem[1024];
    for (int i = threadIdx.x; i < img_words; i += blockDim.x) smem[i] = img[i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    unsigned base = smem_addr(smem);
    float d[8];
    for (int i = 0; i < 8; i++) d[i] = c[threadIdx.x * 8 + i];
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int k = 0; k < 2; k++) {
        unsigned long long a = desc(st->a_fixed, base + st->a_off[k]), b = desc(st->b_fixed, base + st->b_off[k]);
        if (KIND == 0) mma_bf16<0, 0>(d, a, b);
        if (KIND == 1) mma_bf16<1, 1>(d, a, b);
        if (KIND == 2) mma_tf32(d, a, b);
        if (KIND == 3) mma_e4m3(d, a, b);
        if (KIND == 4) mma_f16_rega(d, areg + (k * 128 + threadIdx.x) * 4, b);
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    for (int i = 0; i < 8; i++) out[threadIdx.x * 8 + i] = d[i];
}

extern "C" __global__ void wgmma_bf16_k(const uint4* img, int w, const Step* st, const float* c, const unsigned* r, float* o) { run<0>(img, w, st, c, r, o); }
extern "C" __global__ void wgmma_bf16_mn(const uint4* img, int w, const Step* st, const float* c, const unsigned* r, float* o) { run<1>(img, w, st, c, r, o); }
extern "C" __global__ void wgmma_tf32(const uint4* img, int w, const Step* st, const float* c, const unsigned* r, float* o) { run<2>(img, w, st, c, r, o); }
extern "C" __global__ void wgmma_fp8(const uint4* img, int w, const Step* st, const float* c, const unsigned* r, float* o) { run<3>(img, w, st, c, r, o); }
extern "C" __global__ void wgmma_f16_rega(const uint4* img, int w, const Step* st, const float* c, const unsigned* r, float* o) { run<4>(img, w, st, c, r, o); }

// setmaxnreg: a producer warpgroup gives registers up, a consumer takes them (two warpgroups).
extern "C" __global__ void __launch_bounds__(256, 1) maxnreg(unsigned* out) {
    if (threadIdx.x < 128) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    else asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    out[threadIdx.x] = threadIdx.x * 7;
}

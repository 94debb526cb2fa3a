// fp8 on sm_89/sm_90: the packed conversions (cvt with e4m3x2 / e5m2x2, .satfinite, .relu) and
// mma.sync m16n8k32 with e4m3/e5m2 inputs. Outputs are raw bits, compared bitwise across devices.
extern "C" __global__ void fp8_cvt(const float* x, unsigned short* e4, unsigned short* e5,
                                   unsigned short* r4, unsigned short* h4, unsigned* back4,
                                   unsigned* back5, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[2 * i], b = x[2 * i + 1];
    unsigned short v4, v5, vr, vh;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(v4) : "f"(a), "f"(b));
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(v5) : "f"(a), "f"(b));
    asm("cvt.rn.satfinite.relu.e4m3x2.f32 %0, %1, %2;" : "=h"(vr) : "f"(a), "f"(b));
    unsigned h2;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h2) : "f"(a), "f"(b));
    asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(vh) : "r"(h2));
    unsigned w4, w5;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(w4) : "h"(v4));
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(w5) : "h"(v5));
    e4[i] = v4; e5[i] = v5; r4[i] = vr; h4[i] = vh; back4[i] = w4; back5[i] = w5;
}

// One warp: D = A * B + C with fragments as the PTX ISA lays them out (the host packs them).
extern "C" __global__ void fp8_mma(const unsigned* pa, const unsigned* pb, const float* pc, float* pd, int kinds) {
    unsigned l = threadIdx.x;
    unsigned a[4], b[2];
    float c[4], d[4];
    for (int i = 0; i < 4; i++) a[i] = pa[i * 32 + l];
    for (int i = 0; i < 2; i++) b[i] = pb[i * 32 + l];
    for (int i = 0; i < 4; i++) c[i] = pc[i * 32 + l];
    if (kinds == 0)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
                       "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
                       "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++) pd[i * 32 + l] = d[i];
}

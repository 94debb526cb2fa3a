// int8 dot product with __dp4a: four byte products per instruction, a warp-shuffle reduction per
// warp and one atomicAdd per warp. Bytes past the last full int32 are handled one at a time.
extern "C" __global__ void dot_i8(const signed char* x, const signed char* y, int* out, int n) {
    int words = n / 4;
    const int* x4 = reinterpret_cast<const int*>(x);
    const int* y4 = reinterpret_cast<const int*>(y);
    int acc = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x)
        acc = __dp4a(x4[i], y4[i], acc);
    int tail = 4 * words + blockIdx.x * blockDim.x + threadIdx.x;
    if (tail < n) acc += (int)x[tail] * (int)y[tail];
    for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffff, acc, off);
    if (threadIdx.x % 32 == 0) atomicAdd(out, acc);
}

// dp2a: two 16-bit values of a times bytes 0-1 (.lo) or 2-3 (.hi) of b, signed and unsigned.
extern "C" __global__ void dp2a_mix(const int* a, const int* b, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[4 * i] = __dp2a_lo(a[i], b[i], i);
    out[4 * i + 1] = __dp2a_hi(a[i], b[i], -i);
    out[4 * i + 2] = (int)__dp2a_lo((unsigned)a[i], (unsigned)b[i], 5u);
    int mixed;  // signed bytes of a times unsigned bytes of b: only PTX has this form
    asm("dp4a.s32.u32 %0, %1, %2, %3;" : "=r"(mixed) : "r"(a[i]), "r"(b[i]), "r"(0));
    out[4 * i + 3] = mixed;
}

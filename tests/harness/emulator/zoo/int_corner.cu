// Integer corner cases: truncating division and remainder of negatives, high and wide products,
// unsigned wrap, arithmetic vs logical shifts, saturating float->int conversion, bit intrinsics.
extern "C" __global__ void int_ops(const int* a, const int* b, const float* f, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];  // y is never 0 nor (x, y) = (INT_MIN, -1)
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    int* o = out + (size_t)i * 16;
    o[0] = x / y;
    o[1] = x % y;
    o[2] = __mulhi(x, y);
    o[3] = (int)__umulhi(ux, uy);
    o[4] = (int)(((long long)x * y) >> 17);
    o[5] = (int)(ux * uy + 0x9e3779b9u);
    o[6] = x >> (i & 31);
    o[7] = (int)(ux >> (i & 31));
    o[8] = __float2int_rz(f[i]);     // saturates, NaN -> 0
    o[9] = (int)__float2uint_rn(f[i]);
    o[10] = __popc(ux) + 64 * __clz(x);
    o[11] = (int)__brev(ux);
    o[12] = __ffs(x) + 64 * __popcll((unsigned long long)ux * uy);
    o[13] = max(x, y) - min(x, y) + abs(x % 1000);
    o[14] = (int)(((unsigned long long)ux * uy) % 1000003ull) + (int)((long long)x / 7);
    o[15] = (int)(short)x + (int)(unsigned char)y + (int)(signed char)y;
}

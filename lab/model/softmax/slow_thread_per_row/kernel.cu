// Deliberately slow: one thread per row, three passes over the row in global memory (max, sum of
// exponentials, write). Lanes of a warp read rows C floats apart: 32 sectors per request. The
// sum is kept in a double: one thread adds up to 131072 terms in sequence.
extern "C" __global__ void softmax(const float* __restrict__ x, float* __restrict__ y, int R, int C)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    const float* row = x + (size_t)r * C;
    float* out = y + (size_t)r * C;
    float m = __int_as_float(0xff800000);
    for (int c = 0; c < C; ++c) m = fmaxf(m, row[c]);
    double s = 0.0;
    for (int c = 0; c < C; ++c) s += __expf(row[c] - m);
    const float inv = (float)(1.0 / s);
    for (int c = 0; c < C; ++c) out[c] = __expf(row[c] - m) * inv;
}

// The float math library as learners call it: accurate and fast (__) variants.
extern "C" __global__ void math(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float* o = out + (size_t)i * 12;
    o[0] = expf(v);
    o[1] = logf(fabsf(v) + 1e-3f);
    o[2] = sqrtf(fabsf(v));
    o[3] = rsqrtf(fabsf(v) + 1e-3f);
    o[4] = sinf(v);
    o[5] = cosf(v);
    o[6] = tanhf(v);
    o[7] = __expf(v * 0.5f);
    o[8] = __fdividef(v, 3.0f + v * v);
    o[9] = powf(fabsf(v) + 0.5f, 1.7f);
    o[10] = erff(v);
    o[11] = fmodf(v * 7.0f, 2.5f) + floorf(v) + ceilf(v) + roundf(v * 3.0f) + truncf(v * 5.0f);
}

extern "C" __global__ void math64(const double* x, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    out[3 * i] = exp(v) + sqrt(fabs(v));
    out[3 * i + 1] = log1p(fabs(v)) / (1.0 + v * v);
    out[3 * i + 2] = fma(v, v, -1.0) + (double)(float)v;
}

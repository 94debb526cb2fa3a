// Non-inlined device functions: a real call with parameters, a return value, a pointer
// argument and recursion-free nesting (ptx .func with call/ret).
__device__ __noinline__ float poly(float x, const float* c, int degree) {
    float acc = c[degree];
    for (int d = degree - 1; d >= 0; --d) acc = acc * x + c[d];
    return acc;
}

__device__ __noinline__ int collatz_steps(long long v) {
    int steps = 0;
    while (v != 1 && steps < 1000) {
        v = (v & 1) ? 3 * v + 1 : v / 2;
        ++steps;
    }
    return steps;
}

__device__ __noinline__ void both(float x, const float* c, int degree, float* p, int* s) {
    *p = poly(x, c, degree);
    *s = collatz_steps((long long)(fabsf(x) * 100.0f) + 1);
}

extern "C" __global__ void apply(const float* x, const float* coeffs, int degree, float* y, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float p;
        int s;
        both(x[i], coeffs, degree, &p, &s);
        y[i] = p;
        steps[i] = s;
    }
}

// Results that depend on the order atomics arrive in, or on the order blocks run in. Each wrong
// kernel is followed by its right twin.

// MoE dispatch: token t goes to expert[t]; the rows of expert e sit at offset[e].. in token order.
// The slot from atomicAdd is the arrival order, which no thread order guarantees.
extern "C" __global__ void moe_place_atomic(const int* expert, const int* offset, int* fill,
                                            int* order, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int e = expert[t];
    int slot = atomicAdd(&fill[e], 1);  // MARK moe-slot
    order[offset[e] + slot] = t;
}

extern "C" __global__ void moe_place_ranked(const int* expert, const int* offset, int* fill,
                                            int* order, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int e = expert[t];
    int slot = 0;
    for (int u = 0; u < t; u++) slot += expert[u] == e;
    order[offset[e] + slot] = t;
}

// Stream compaction that must keep the input order (the positive values, in order).
extern "C" __global__ void compact_atomic(const float* x, float* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) {
        int at = atomicAdd(count, 1);  // MARK compact-slot
        out[at] = x[i];
    }
}

extern "C" __global__ void compact_ranked(const float* x, float* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) {
        int at = 0;
        for (int j = 0; j < i; j++) at += x[j] > 0.0f;
        out[at] = x[i];
        atomicAdd(count, 1);
    }
}

// Cross-entropy averaged over the valid rows (target != ignore): one thread per row.
__device__ float row_loss(const float* logits, int classes, int r, int y) {
    const float* z = logits + r * classes;
    float m = z[0];
    for (int c = 1; c < classes; c++) m = fmaxf(m, z[c]);
    float s = 0.0f;
    for (int c = 0; c < classes; c++) s += expf(z[c] - m);
    return logf(s) + m - z[y];
}

extern "C" __global__ void xent_mean_onepass(const float* logits, const int* target, float* loss,
                                             int* valid, int rows, int classes, int ignore) {
    __shared__ float s_loss;
    __shared__ int s_valid;
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) { s_loss = 0.0f; s_valid = 0; }
    __syncthreads();
    if (r < rows && target[r] != ignore) {
        atomicAdd(&s_loss, row_loss(logits, classes, r, target[r]));
        atomicAdd(&s_valid, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(valid, s_valid);  // MARK xent-add
        __threadfence();
        int total = *valid;  // MARK xent-read
        atomicAdd(loss, s_loss / total);
    }
}

extern "C" __global__ void xent_sum(const float* logits, const int* target, float* loss, int* valid,
                                    int rows, int classes, int ignore) {
    __shared__ float s_loss;
    __shared__ int s_valid;
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) { s_loss = 0.0f; s_valid = 0; }
    __syncthreads();
    if (r < rows && target[r] != ignore) {
        atomicAdd(&s_loss, row_loss(logits, classes, r, target[r]));
        atomicAdd(&s_valid, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(valid, s_valid);
        atomicAdd(loss, s_loss);
    }
}

extern "C" __global__ void xent_divide(float* loss, const int* valid) {
    *loss = *loss / *valid;
}

// y = x / max(x) for non-negative x: the maximum gathered with atomicMax on the float's bits and
// read back in the same launch.
extern "C" __global__ void scale_by_max_onepass(const float* x, float* y, int* maxbits, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicMax(maxbits, __float_as_int(x[i]));  // MARK max-add
    __syncthreads();
    __threadfence();
    if (i < n) y[i] = x[i] / __int_as_float(*maxbits);  // MARK max-read
}

extern "C" __global__ void gather_max(const float* x, int* maxbits, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicMax(maxbits, __float_as_int(x[i]));
}

extern "C" __global__ void scale_by(const float* x, float* y, const int* maxbits, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / __int_as_float(*maxbits);
}

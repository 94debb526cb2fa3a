// LayerNorm forward and backward, several numbered versions in one file as training code keeps
// them. floatX is float or bf16 through templates with explicit instantiation.
#include "common.cuh"

// v1: one thread per row (slow, the CPU loop moved to the GPU)
__global__ void layernorm_forward1(float* out, float* mean, float* rstd, const float* inp,
                                   const float* weight, const float* bias, int N, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= N) return;
    const float* x = inp + idx * C;
    float m = 0.0f;
    for (int i = 0; i < C; i++) m += x[i];
    m /= C;
    float v = 0.0f;
    for (int i = 0; i < C; i++) { float d = x[i] - m; v += d * d; }
    float s = 1.0f / sqrtf(v / C + 1e-5f);
    for (int i = 0; i < C; i++) out[idx * C + i] = (x[i] - m) * s * weight[i] + bias[i];
    mean[idx] = m;
    rstd[idx] = s;
}

// v2: a warp per row with cooperative-groups tiles; mean and rstd stored with streaming hints
__global__ void layernorm_forward2(float* __restrict__ out, float* __restrict__ mean, float* __restrict__ rstd,
                                   const float* __restrict__ inp, const float* __restrict__ weight,
                                   const float* __restrict__ bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (idx >= N) return;
    const float* x = inp + idx * C;
    float sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) sum += x[i];
    float m = cg::reduce(warp, sum, cg::plus<float>{}) / C;
    float var = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) { float d = x[i] - m; var += d * d; }
    float s = rsqrtf(cg::reduce(warp, var, cg::plus<float>{}) / C + 1e-5f);
    if (warp.thread_rank() == 0) { __stcs(mean + idx, m); __stcs(rstd + idx, s); }
    float* o = out + idx * C;
    for (int c = warp.thread_rank(); c < C; c += warp.size()) {
        float n = s * (__ldcs(x + c) - m);
        __stcs(o + c, n * weight[c] + bias[c]);
    }
}

// v3: floatX rows moved in 16-byte packs (C a multiple of 8 for bf16, 4 for float)
template <class T>
__global__ void layernorm_forward3(T* out, float* mean, float* rstd, const T* inp, const T* weight,
                                   const T* bias, int N, int C) {
    constexpr int P = Pack16<T>::size;
    int lane = threadIdx.x % WARP_SIZE;
    int idx = blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE;
    if (idx >= N) return;
    const T* x = inp + (size_t)idx * C;
    float sum = 0.0f;
    for (int c = lane * P; c < C; c += WARP_SIZE * P) {
        Pack16<T> p = load16_cs(x + c);
        for (int k = 0; k < P; k++) sum += (float)p[k];
    }
    float m = warp_sum(sum) / C;
    float var = 0.0f;
    for (int c = lane * P; c < C; c += WARP_SIZE * P) {
        Pack16<T> p = load16(x + c);
        for (int k = 0; k < P; k++) { float d = (float)p[k] - m; var += d * d; }
    }
    float s = rsqrtf(warp_sum(var) / C + 1e-5f);
    for (int c = lane * P; c < C; c += WARP_SIZE * P) {
        Pack16<T> p = load16(x + c), w = load16(weight + c), b = load16(bias + c), o;
        for (int k = 0; k < P; k++) o[k] = (T)(s * ((float)p[k] - m) * (float)w[k] + (float)b[k]);
        store16_cs(out + (size_t)idx * C + c, o);
    }
    if (lane == 0) { mean[idx] = m; rstd[idx] = s; }
}
template __global__ void layernorm_forward3<float>(float*, float*, float*, const float*, const float*, const float*, int, int);
template __global__ void layernorm_forward3<__nv_bfloat16>(__nv_bfloat16*, float*, float*, const __nv_bfloat16*,
                                                           const __nv_bfloat16*, const __nv_bfloat16*, int, int);

// backward v1: a warp per row, dweight/dbias accumulated with global atomics
__global__ void layernorm_backward1(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                                    const float* weight, const float* mean, const float* rstd, int N, int C) {
    int lane = threadIdx.x % 32;
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (row >= N) return;
    const float* g = dout + row * C; const float* x = inp + row * C;
    float m = mean[row], r = rstd[row], a = 0.0f, b = 0.0f;
    for (int i = lane; i < C; i += 32) { float n = (x[i] - m) * r, dn = weight[i] * g[i]; a += dn; b += dn * n; }
    a = warp_sum(a) / C; b = warp_sum(b) / C;
    for (int i = lane; i < C; i += 32) {
        float n = (x[i] - m) * r;
        atomicAdd(&dbias[i], g[i]);
        atomicAdd(&dweight[i], n * g[i]);
        dinp[row * C + i] = (weight[i] * g[i] - a - n * b) * r;
    }
}

// backward v2: block partials in shared memory, one scratch row per block in global memory, and the
// last block to take a ticket (atomicAdd on a counter after __threadfence) sums the scratch rows
template <class T>
__global__ void layernorm_backward2(T* dinp, T* dweight, T* dbias, float* scratch, const T* dout, const T* inp,
                                    const T* weight, const float* mean, const float* rstd, int N, int C) {
    extern __shared__ float shared[];  // 2 * C + 1 floats
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float* db = shared; float* dw = shared + C;
    unsigned int* ticket = reinterpret_cast<unsigned int*>(shared + 2 * C);
    for (int i = threadIdx.x; i < C; i += blockDim.x) { db[i] = 0.0f; dw[i] = 0.0f; }
    __syncthreads();
    int warps_in_grid = gridDim.x * warp.meta_group_size();
    for (int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank(); row < N; row += warps_in_grid) {
        const T* g = dout + (size_t)row * C; const T* x = inp + (size_t)row * C;
        float m = mean[row], r = rstd[row], a = 0.0f, b = 0.0f;
        for (int i = warp.thread_rank(); i < C; i += warp.size()) {
            float n = ((float)x[i] - m) * r, dn = (float)weight[i] * (float)g[i];
            a += dn; b += dn * n;
        }
        a = cg::reduce(warp, a, cg::plus<float>{}) / C;
        b = cg::reduce(warp, b, cg::plus<float>{}) / C;
        for (int i = warp.thread_rank(); i < C; i += warp.size()) {
            float gi = (float)__ldcs(&g[i]), n = ((float)__ldcs(&x[i]) - m) * r;
            atomicAdd(&db[i], gi);
            atomicAdd(&dw[i], n * gi);
            dinp[(size_t)row * C + i] = (T)(((float)weight[i] * gi - a - n * b) * r);
        }
    }
    __syncthreads();
    float* part_b = scratch; float* part_w = scratch + C * gridDim.x;
    unsigned int* counter = reinterpret_cast<unsigned int*>(scratch + 2 * C * gridDim.x);
    for (int i = threadIdx.x; i < C; i += blockDim.x) { part_b[i + C * blockIdx.x] = db[i]; part_w[i + C * blockIdx.x] = dw[i]; }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) *ticket = atomicAdd(counter, 1u);
    __syncthreads();
    if (*ticket == gridDim.x - 1) {
        for (int i = threadIdx.x; i < C; i += blockDim.x) {
            float sb = 0.0f, sw = 0.0f;
            for (int j = 0; j < gridDim.x; j++) { sb += part_b[i + j * C]; sw += part_w[i + j * C]; }
            dbias[i] = (T)sb; dweight[i] = (T)sw;
        }
    }
}
template __global__ void layernorm_backward2<float>(float*, float*, float*, float*, const float*, const float*,
                                                    const float*, const float*, const float*, int, int);
template __global__ void layernorm_backward2<__nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, float*,
                                                            const __nv_bfloat16*, const __nv_bfloat16*,
                                                            const __nv_bfloat16*, const float*, const float*, int, int);

// backward v3: one fp32 scratch shared by all blocks (atomics), ticket with atomicInc, the last block
// converts; the per-warp row loop has no barrier inside, so uneven rows per warp are fine
__global__ void layernorm_backward3(float* dinp, __nv_bfloat16* dweight, __nv_bfloat16* dbias, float* scratch,
                                    const float* dout, const float* inp, const float* weight,
                                    const float* mean, const float* rstd, int N, int C) {
    extern __shared__ float shared[];
    float* db = shared; float* dw = shared + C;
    __shared__ unsigned int last;
    for (int i = threadIdx.x; i < C; i += blockDim.x) { db[i] = 0.0f; dw[i] = 0.0f; }
    __syncthreads();
    int nw = blockDim.x / 32, w = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int row = blockIdx.x * nw + w; row < N; row += gridDim.x * nw) {
        float m = mean[row], r = rstd[row], a = 0.0f, b = 0.0f;
        for (int i = lane; i < C; i += 32) { float n = (inp[row * C + i] - m) * r, dn = weight[i] * dout[row * C + i]; a += dn; b += dn * n; }
        a = warp_sum(a) / C; b = warp_sum(b) / C;
        for (int i = lane; i < C; i += 32) {
            float gi = dout[row * C + i], n = (inp[row * C + i] - m) * r;
            atomicAdd(&db[i], gi); atomicAdd(&dw[i], n * gi);
            dinp[row * C + i] = (weight[i] * gi - a - n * b) * r;
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < C; i += blockDim.x) { atomicAdd(&scratch[i], db[i]); atomicAdd(&scratch[C + i], dw[i]); }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicInc(reinterpret_cast<unsigned int*>(scratch + 2 * C), gridDim.x) == gridDim.x - 1;
    __syncthreads();
    if (last) {
        for (int i = threadIdx.x; i < C; i += blockDim.x) {
            dbias[i] = __float2bfloat16(__ldcg(&scratch[i]));
            dweight[i] = __float2bfloat16(__ldcg(&scratch[C + i]));
        }
    }
}

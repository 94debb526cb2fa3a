// Design: one 128-thread block per row, shared-memory tree sum (most threads idle on 16-element rows).
extern "C" __global__ void spmv(const int* row_ptr, const int* col_idx, const float* vals, const float* x, float* y, int m)
{
    __shared__ float s[128];
    int row = blockIdx.x, tid = threadIdx.x;
    float sum = 0.0f;
    for (int j = row_ptr[row] + tid; j < row_ptr[row + 1]; j += blockDim.x) sum += vals[j] * x[col_idx[j]];
    s[tid] = sum;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (tid < st) s[tid] += s[tid + st];
        __syncthreads();
    }
    if (tid == 0) y[row] = s[0];
}

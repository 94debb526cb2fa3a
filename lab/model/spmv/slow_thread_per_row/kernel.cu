// Deliberately slow: scalar CSR, one thread per row. Neighbouring lanes walk different rows, so
// the loads of col_idx and vals are uncoalesced (one sector per lane per step) and a warp waits
// for its longest row.
extern "C" __global__ void spmv(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y, int m)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < m) {
        float acc = 0.0f;
        for (int j = row_ptr[r]; j < row_ptr[r + 1]; ++j) {
            acc += vals[j] * x[col_idx[j]];
        }
        y[r] = acc;
    }
}

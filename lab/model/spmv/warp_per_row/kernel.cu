// Vector CSR: one warp per row. Lanes read consecutive col_idx/vals of the row (coalesced) and a
// shuffle tree sums them; short rows (16 non-zeros on average) leave half the lanes idle.
extern "C" __global__ void spmv(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y, int m)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= m) return;
    float acc = 0.0f;
    for (int j = row_ptr[warp] + lane; j < row_ptr[warp + 1]; j += 32) {
        acc += vals[j] * x[col_idx[j]];
    }
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (lane == 0) y[warp] = acc;
}

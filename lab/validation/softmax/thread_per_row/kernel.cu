// Design: one thread per row, three passes over the row (max, sum of exp, write); a warp touches 32 different rows.
extern "C" __global__ void softmax(const float* x, float* y, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    const float* row = x + (size_t)r * C;
    float* out = y + (size_t)r * C;
    float mx = -1e30f;
    for (int c = 0; c < C; c++) mx = fmaxf(mx, row[c]);
    float sum = 0.0f;
    for (int c = 0; c < C; c++) sum += expf(row[c] - mx);
    for (int c = 0; c < C; c++) out[c] = expf(row[c] - mx) / sum;
}

// LayerNorm forward over the rows of an R×C float32 matrix (row-major):
//   mean[r] = sum_c x[r][c] / C,  var = sum_c (x[r][c] - mean[r])^2 / C,  rstd[r] = 1 / sqrt(var + eps),
//   y[r][c] = (x[r][c] - mean[r]) * rstd[r] * gamma[c] + beta[c].
// `kata grade` compiles this file with NVRTC. The default launch plan gives each row one block.
extern "C" __global__ void layernorm(const float* __restrict__ x, const float* __restrict__ gamma,
                                     const float* __restrict__ beta, float* __restrict__ y,
                                     float* __restrict__ mean, float* __restrict__ rstd,
                                     int R, int C, float eps)
{
    const int r = blockIdx.x;  // this block's row
    const float* const row = x + (size_t)r * C;
    float* const out = y + (size_t)r * C;

    // TODO: the row's mean: each thread sums columns threadIdx.x, threadIdx.x + blockDim.x, ...
    //       then combine the threads (warp shuffles and/or shared memory, with __syncthreads()).

    // TODO: the variance. Some rows have a mean near 2000 and a standard deviation near 0.5:
    //       E[x^2] - mean^2 loses every digit of that in float32.

    // TODO: write y for every column, and mean[r], rstd[r] once per row.
    (void)row; (void)out; (void)gamma; (void)beta; (void)mean; (void)rstd; (void)R; (void)eps;
}

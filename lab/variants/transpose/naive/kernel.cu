// The naive transpose, kept to be timed against the solution: correct, one thread per element,
// reads coalesced (lanes on neighbouring columns of A) but every store strided: the 32 lanes of a
// warp write one column of B, 32 addresses R floats apart, so each 4-byte store moves a 32-byte
// sector (8x the compulsory write traffic unless L2 merges the partial sectors first).
extern "C" __global__ void transpose(const float* __restrict__ A, float* __restrict__ B, int R, int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < R; r += gridDim.y * blockDim.y) {
        if (c < C) B[(size_t)c * R + r] = A[(size_t)r * C + c];
    }
}

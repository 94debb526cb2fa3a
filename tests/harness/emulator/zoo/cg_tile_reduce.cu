// Cooperative-groups tile reductions: 16-thread tiles (sub-warp) and 64-thread tiles, which span
// two warps and need cg::block_tile_memory (on sm_80+ its scratch lives in reserved shared memory).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void tile_sums(const float* x, float* sums16, float* sums64, int n) {
    __shared__ cg::block_tile_memory<256> scratch;
    cg::thread_block block = cg::this_thread_block(scratch);
    int i = blockIdx.x * blockDim.x + block.thread_rank();
    float v = i < n ? x[i] : 0.0f;

    cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
    float s16 = cg::reduce(t16, v, cg::plus<float>());
    if (t16.thread_rank() == 0) sums16[i / 16] = s16;

    cg::thread_block_tile<64> t64 = cg::tiled_partition<64>(block);
    float s64 = cg::reduce(t64, v, cg::plus<float>());
    if (t64.thread_rank() == 0) sums64[i / 64] = s64;
}

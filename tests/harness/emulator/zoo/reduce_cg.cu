// Cooperative groups: a block group, 32-thread tiles, tile shuffles and cg::reduce.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void reduce(const float* x, float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    __shared__ float partial[32];
    int i = block.group_index().x * block.size() + block.thread_rank();
    float v = i < n ? x[i] : 0.0f;
    for (int off = tile.size() / 2; off > 0; off /= 2)
        v += tile.shfl_down(v, off);
    if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = v;
    block.sync();
    if (tile.meta_group_rank() == 0) {
        float w = tile.thread_rank() < tile.meta_group_size() ? partial[tile.thread_rank()] : 0.0f;
        w = cg::reduce(tile, w, cg::plus<float>());
        if (tile.thread_rank() == 0) atomicAdd(out, w);
    }
}

// Stream compaction with warp-aggregated atomics: __ballot_sync finds the keepers, one lane
// reserves space with a single atomicAdd, __popc of the lower mask gives each lane its slot.
extern "C" __global__ void compact(const int* in, int* out, int* count, int n, int threshold) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    bool keep = i < n && v > threshold;
    unsigned mask = __ballot_sync(0xffffffffu, keep);
    int lane = threadIdx.x & 31;
    int leader = __ffs(mask) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader < 0 ? 0 : leader);
    if (keep) out[base + __popc(mask & ((1u << lane) - 1))] = v;
    if (__any_sync(0xffffffffu, keep) && !__all_sync(0xffffffffu, keep || i >= n) && lane == 0)
        atomicAdd(count + 1, 1);  // warps with mixed keep/drop lanes
}

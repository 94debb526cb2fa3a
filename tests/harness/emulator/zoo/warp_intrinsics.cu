// Warp intrinsics beyond shuffles: __reduce_add_sync (redux), __match_any_sync, __activemask
// in a divergent branch, and a broadcast from an arbitrary lane.
extern "C" __global__ void warp_ops(const int* keys, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int k = i < n ? keys[i] : -1;
    int* o = out + (size_t)i * 4;
    unsigned peers = __match_any_sync(0xffffffffu, k);
    int total = __reduce_add_sync(0xffffffffu, (unsigned)k);
    int mx = __reduce_max_sync(0xffffffffu, k);
    int from7 = __shfl_sync(0xffffffffu, k, 7);
    int odd_lanes = -1;
    if (lane & 1) {
        unsigned active = __activemask();
        odd_lanes = __popc(active);
    }
    if (i < n) {
        o[0] = __popc(peers);
        o[1] = total;
        o[2] = mx ^ from7;
        o[3] = odd_lanes;
    }
}

// Clusters of several blocks (__cluster_dims__): the cluster registers, barrier.cluster, and
// distributed shared memory: each block writes its shared memory, the cluster synchronises, and
// every block reads the next rank's memory (cooperative groups' map_shared_rank, which compiles
// to mapa.shared::cluster + ld.shared::cluster) and writes into the previous rank's.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// mapa.u64 on a generic pointer (what some NVRTC versions make of map_shared_rank), then plain
// generic loads and stores through it.
__device__ __forceinline__ unsigned* map_generic(unsigned* p, unsigned rank) {
    unsigned long long r;
    asm volatile("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(rank));
    return reinterpret_cast<unsigned*>(r);
}

template <int N, bool GENERIC>
__device__ void ring(unsigned* out) {
    __shared__ unsigned cell[128], inbox[128];
    cg::cluster_group cl = cg::this_cluster();
    unsigned rank = cl.block_rank(), t = threadIdx.x;
    unsigned cid;
    asm("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
    cell[t] = t + 100 * rank + 1000 * blockIdx.y;
    cl.sync();
    unsigned* next = GENERIC ? map_generic(cell, (rank + 1) % N) : cl.map_shared_rank(cell, (rank + 1) % N);
    unsigned* prev_inbox = GENERIC ? map_generic(inbox, (rank + N - 1) % N)
                                   : cl.map_shared_rank(inbox, (rank + N - 1) % N);
    unsigned got = next[(t + 1) % blockDim.x];
    prev_inbox[t] = got * 2;
    cl.sync();
    unsigned* o = out + ((blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + t) * 6;
    dim3 ci = cl.block_index();
    o[0] = rank; o[1] = cl.num_blocks(); o[2] = cid; o[3] = ci.x + 10 * ci.y; o[4] = got; o[5] = inbox[t];
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) ring2(unsigned* out) { ring<2, false>(out); }
extern "C" __global__ void __cluster_dims__(2, 2, 1) ring4(unsigned* out) { ring<4, false>(out); }
extern "C" __global__ void __cluster_dims__(4, 1, 1) ring4_generic(unsigned* out) { ring<4, true>(out); }

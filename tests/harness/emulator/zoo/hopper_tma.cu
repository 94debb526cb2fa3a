// TMA and mbarriers: bulk copies global -> shared signalled on an mbarrier (several phases of one
// barrier, waited by parity), bulk stores and bulk reductions shared -> global, and tensor copies
// (1-D to 5-D, with swizzling) through tensor maps in global memory made by the host.
__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
    unsigned ok = 0;
    while (!ok)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
}

// Each block streams `chunks` chunks of 256 floats through one buffer and one mbarrier: chunk c is
// phase c of the barrier. out = in + 1 (bulk store), sums += in (bulk reduction, add.f32).
extern "C" __global__ void bulk_stream(const float* in, float* out, float* sums, int chunks) {
    __shared__ __align__(128) float buf[256];
    __shared__ __align__(8) unsigned long long bar;
    unsigned b = smem_addr(&bar), s = smem_addr(buf);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    for (int c = 0; c < chunks; c++) {
        const float* src = in + ((size_t)blockIdx.x * chunks + c) * 256;
        if (threadIdx.x == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(1024) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         :: "r"(s), "l"(src), "r"(1024), "r"(b) : "memory");
        }
        wait_parity(b, c & 1);
        buf[threadIdx.x] += 1.0f;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        if (threadIdx.x == 0) {
            float* dst = out + ((size_t)blockIdx.x * chunks + c) * 256;
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" :: "l"(dst), "r"(s), "r"(1024) : "memory");
            asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
                         :: "l"(sums + (size_t)blockIdx.x * 256), "r"(s), "r"(1024) : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        }
        __syncthreads();
    }
}

// One box of a rank-`rank` tensor map at coordinates c[0..rank-1] into shared memory, copied out
// raw (the swizzled layout, byte for byte), then written back through the map at coordinates d
// (tensor store) and added into `acc`'s map (tensor reduction).
extern "C" __global__ void tensor_box(const void* map, const void* store_map, const void* acc_map,
                                      const int* c, const int* d, unsigned char* raw, int bytes, int rank,
                                      int reduce) {
    __shared__ __align__(1024) unsigned char box[8192];
    __shared__ __align__(8) unsigned long long bar;
    unsigned b = smem_addr(&bar), s = smem_addr(box);
    for (int i = threadIdx.x; i < 8192; i += blockDim.x) box[i] = 0xAB;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
        if (rank == 1)
            asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                         :: "r"(s), "l"(map), "r"(c[0]), "r"(b) : "memory");
        else if (rank == 2)
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                         :: "r"(s), "l"(map), "r"(c[0]), "r"(c[1]), "r"(b) : "memory");
        else if (rank == 3)
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                         :: "r"(s), "l"(map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(b) : "memory");
        else if (rank == 4)
            asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                         :: "r"(s), "l"(map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(b) : "memory");
        else
            asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                         :: "r"(s), "l"(map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(b) : "memory");
    }
    wait_parity(b, 0);
    for (int i = threadIdx.x; i < bytes; i += blockDim.x) raw[i] = box[i];
    __syncthreads();
    if (threadIdx.x == 0 && rank == 2) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                     :: "l"(store_map), "r"(d[0]), "r"(d[1]), "r"(s) : "memory");
        if (reduce)  // TMA's .add exists for 32/64-bit integers and floats, not 8/16-bit integers
            asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];"
                         :: "l"(acc_map), "r"(d[0]), "r"(d[1]), "r"(s) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}

// mbarrier phases by token: 64 threads arrive (count 64) twice; each records whether test_wait
// with its first token succeeded before and after the second phase, and the tokens' difference.
extern "C" __global__ void mbar_tokens(unsigned* out) {
    __shared__ __align__(8) unsigned long long bar;
    unsigned b = smem_addr(&bar);
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(64));
    __syncthreads();
    unsigned long long t0, t1;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(t0) : "r"(b) : "memory");
    unsigned ok = 0;
    while (!ok)
        asm volatile("{ .reg .pred p; mbarrier.test_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(ok) : "r"(b), "l"(t0) : "memory");
    unsigned early;
    asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(early) : "r"(b), "r"(1) : "memory");
    __syncthreads();
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(t1) : "r"(b) : "memory");
    ok = 0;
    while (!ok)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(ok) : "r"(b), "l"(t1) : "memory");
    out[threadIdx.x * 4] = early * 2 + ok;
    out[threadIdx.x * 4 + 1] = (unsigned)(t1 != t0);  // the tokens name different phases
    unsigned after;  // parity 0 once both phases completed: phase 2 (even) is running
    asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(after) : "r"(b), "r"(0) : "memory");
    out[threadIdx.x * 4 + 2] = after;
    out[threadIdx.x * 4 + 3] = ok;
    __syncthreads();  // every thread is done with the barrier before it is invalidated
    if (threadIdx.x == 0) asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(b) : "memory");
}

// Clusters of one block (a launch without cluster dimensions): the cluster registers, the
// cluster barrier, and distributed shared memory through mapa to rank 0 (this block).
extern "C" __global__ void cluster_one(unsigned* out) {
    __shared__ unsigned cell[128];
    unsigned id, rank, n, ctaid;
    asm("mov.u32 %0, %%clusterid.x;" : "=r"(id));
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(ctaid));
    unsigned local = smem_addr(&cell[threadIdx.x]), remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(0));
    asm volatile("st.shared::cluster.u32 [%0], %1;" :: "r"(remote), "r"(threadIdx.x * 3 + blockIdx.x) : "memory");
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    unsigned peer = smem_addr(&cell[(threadIdx.x + 1) % blockDim.x]), got;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(peer), "r"(0));
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(got) : "r"(remote) : "memory");
    unsigned* o = out + (blockIdx.x * blockDim.x + threadIdx.x) * 5;
    o[0] = id; o[1] = rank; o[2] = n; o[3] = ctaid; o[4] = got;
}

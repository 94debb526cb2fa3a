// kata-expect: wrong-answer
// bfs_init writes only the source's 0 and never -1 elsewhere, so unreachable vertices keep whatever dist held before the launch (fresh device memory is not -1).
// BFS hop distances on a directed CSR graph: level-synchronous, edge-parallel.
//
// The trick is what a thread owns. Thread-per-vertex expansion stalls on power-law graphs: one
// thread walks a hub's 100k edges while the rest of the GPU idles. Here a thread owns an EDGE:
// bfs_edge_sources first labels every edge with its source vertex (a binary search in row_ptr,
// once), then each level is one perfectly balanced sweep over all m edges: "if my source is on the
// frontier and my target is unvisited, the target is on the next level". The sweep reads src
// sequentially and dist through L2 (4 bytes per vertex: 16 MB at RMAT scale 22 fits in the 60 MB
// L2), so a level costs about one pass over 4m bytes, and RMAT graphs need only a handful of levels.
//
// No atomics on dist: every thread that discovers a vertex in level L writes the same value L + 1,
// so the race between them is benign. A vertex discovered in level L is not re-expanded in level L
// because only sources with dist == L expand.

// dist[source] = 0; every other vertex is taken to be unreached already.
extern "C" __global__ void bfs_init(int* __restrict__ dist, int n, int source)
{
    if (blockIdx.x == 0 && threadIdx.x == 0 && source < n)
        dist[source] = 0;
}

// src[e] = the vertex whose row holds edge e: the largest v with row_ptr[v] <= e. The 32 lanes of
// a warp search for consecutive e, so their probes coincide until the last steps and coalesce.
extern "C" __global__ void bfs_edge_sources(const int* __restrict__ row_ptr, int* __restrict__ src, int n, int m)
{
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < m; e += gridDim.x * blockDim.x) {
        int lo = 0, hi = n - 1;  // row_ptr[0] = 0 <= e always; row_ptr[n] = m > e
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (row_ptr[mid] <= e) lo = mid;
            else hi = mid - 1;
        }
        src[e] = lo;
    }
}

// One level: every edge leaving a vertex at distance `level` labels its unreached target level + 1.
// *found is set to level + 1 when anything was labelled, so the host loop needs no reset between
// levels: it stops at the first level whose sweep leaves *found unchanged.
extern "C" __global__ void bfs_level(const int* __restrict__ src, const int* __restrict__ col_idx,
                                     int* __restrict__ dist, int m, int level, int* __restrict__ found)
{
    __shared__ int block_found;
    if (threadIdx.x == 0) block_found = 0;
    __syncthreads();

    bool any = false;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < m; e += gridDim.x * blockDim.x) {
        if (dist[src[e]] == level) {
            const int u = col_idx[e];
            if (dist[u] < 0) {  // the read filters out most repeat writes to popular targets
                dist[u] = level + 1;
                any = true;
            }
        }
    }
    // One global store per block, not per discovery: millions of stores to one address in a big
    // level would serialise in L2. A warp vote, then one shared atomic per warp.
    if (__any_sync(0xffffffffu, any) && (threadIdx.x & 31) == 0) atomicOr(&block_found, 1);
    __syncthreads();
    if (threadIdx.x == 0 && block_found) *found = level + 1;
}

// Level-synchronous top-down BFS: one thread per vertex of the frontier level, atomicCAS claims
// unvisited neighbours; the host loops while a level discovered something.
extern "C" __global__ void init(int* dist, int n, int source) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) dist[v] = v == source ? 0 : -1;
}

extern "C" __global__ void bfs_level(const int* row_ptr, const int* col, int* dist, int n, int level,
                                     int* changed) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || dist[v] != level) return;
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; ++e) {
        int u = col[e];
        if (atomicCAS(&dist[u], -1, level + 1) == -1) *changed = 1;
    }
}

// Design: top-down BFS, one warp per vertex every level, the lanes split the frontier vertex's edges.
extern "C" __global__ void bfs_init(int* dist, int n, int source)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) dist[v] = v == source ? 0 : -1;
}
extern "C" __global__ void bfs_level(const int* row_ptr, const int* col_idx, int* dist, int n, int level, int* changed)
{
    int v = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (v >= n || dist[v] != level) return;
    for (int e = row_ptr[v] + lane; e < row_ptr[v + 1]; e += 32) {
        int u = col_idx[e];
        if (dist[u] == -1) { dist[u] = level + 1; *changed = 1; }
    }
}

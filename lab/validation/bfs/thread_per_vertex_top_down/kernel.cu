// Design: level-synchronous top-down BFS, one thread per vertex every level (only frontier vertices work), benign same-value races, a changed flag read by the host.
extern "C" __global__ void bfs_init(int* dist, int n, int source)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) dist[v] = v == source ? 0 : -1;
}
extern "C" __global__ void bfs_level(const int* row_ptr, const int* col_idx, int* dist, int n, int level, int* changed)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || dist[v] != level) return;
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; e++) {
        int u = col_idx[e];
        if (dist[u] == -1) { dist[u] = level + 1; *changed = 1; }
    }
}

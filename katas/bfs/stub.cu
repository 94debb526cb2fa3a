// BFS hop distances from `source` on a directed graph in CSR form: the out-edges of vertex v are
// col_idx[row_ptr[v]] .. col_idx[row_ptr[v+1] - 1]. dist[v] = hops from source, -1 if unreachable.
// `kata grade` compiles this file with NVRTC. The default launch plan (launch.py) runs bfs_init once,
// then bfs_level for level = 0, 1, 2, ... until a level discovers nothing.

extern "C" __global__ void bfs_init(int* __restrict__ dist, int n, int source)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    // TODO: every vertex starts unreached (-1), except the source (0). Mind v >= n.
    (void)dist; (void)n; (void)source; (void)v;
}

// One level: expand every vertex at distance `level`. Set *changed = 1 if any vertex got a distance.
extern "C" __global__ void bfs_level(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                     int* __restrict__ dist, int n, int level, int* __restrict__ changed)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    // TODO: skip threads past n and vertices not on this level's frontier (dist[v] != level).

    // TODO: for each out-edge v -> u, an unreached u (dist[u] == -1) gets level + 1; record that
    //       something changed. (Several threads may discover the same u: they all write level + 1.)
    (void)row_ptr; (void)col_idx; (void)dist; (void)n; (void)level; (void)changed; (void)v;
}

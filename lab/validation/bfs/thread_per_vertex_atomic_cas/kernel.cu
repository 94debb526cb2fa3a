// Design: top-down BFS, one thread per vertex per level, atomicCAS claims each unvisited neighbour, an atomic counter of newly labelled vertices.
extern "C" __global__ void bfs_init(int* dist, int n, int source)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) dist[v] = v == source ? 0 : -1;
}
extern "C" __global__ void bfs_level(const int* row_ptr, const int* col_idx, int* dist, int n, int level, int* count)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || dist[v] != level) return;
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; e++) {
        if (atomicCAS(&dist[col_idx[e]], -1, level + 1) == -1) atomicAdd(count, 1);
    }
}

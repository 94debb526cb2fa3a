// Design: frontier queues: one thread per frontier vertex, atomicCAS claims a neighbour and atomicAdd appends it to the next queue; the host reads the queue length.
extern "C" __global__ void bfs_init(int* dist, int n, int source)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) dist[v] = v == source ? 0 : -1;
}
extern "C" __global__ void bfs_seed(int* queue, int source)
{
    queue[0] = source;
}
extern "C" __global__ void bfs_expand(const int* row_ptr, const int* col_idx, int* dist, const int* frontier, int size,
                                      int* next, int* next_size, int level)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= size) return;
    int v = frontier[t];
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; e++) {
        int u = col_idx[e];
        if (atomicCAS(&dist[u], -1, level + 1) == -1) next[atomicAdd(next_size, 1)] = u;
    }
}

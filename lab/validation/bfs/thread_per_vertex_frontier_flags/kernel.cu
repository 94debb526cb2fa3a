// Design: top-down BFS with two frontier flag arrays, one thread per vertex per level (128-thread blocks); the host swaps the flags and stops on an empty frontier.
extern "C" __global__ void init(int* dist, int* frontier, int n, int source)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) { dist[v] = v == source ? 0 : -1; frontier[v] = v == source; }
}
extern "C" __global__ void expand(const int* row_ptr, const int* col_idx, int* dist, const int* frontier, int* next,
                                  int n, int level, int* count)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || !frontier[v]) return;
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; e++) {
        int u = col_idx[e];
        if (dist[u] < 0) {
            dist[u] = level + 1;
            next[u] = 1;
            *count = 1;
        }
    }
}

// A per-thread array indexed by data (forces .local memory): running 8-bin insertion sort.
extern "C" __global__ void local_sort(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int buf[8];
    for (int j = 0; j < 8; ++j) buf[j] = in[(size_t)i * 8 + j];
    for (int j = 1; j < 8; ++j) {
        int v = buf[j], p = j - 1;
        while (p >= 0 && buf[p] > v) { buf[p + 1] = buf[p]; --p; }
        buf[p + 1] = v;
    }
    int pick = in[(size_t)i * 8] & 7;
    out[i] = buf[pick] * 10 + buf[7 - pick];
}

// Attention backward. The forward computed, per (batch, head) and query row i (float32, row-major,
// element (b, h, s, d) at ((b*H + h)*S + s)*D + d, LSE's (b, h, s) at (b*H + h)*S + s):
//   s_ij = q_i·k_j / sqrt(D) for visible keys j (causal != 0: j <= i only)
//   LSE_i = log(sum_j exp(s_ij)),  P_ij = exp(s_ij - LSE_i),  O_i = sum_j P_ij v_j
// Given dO = dL/dO, compute dQ, dK, dV:
//   dV_j = sum_i P_ij dO_i        dP_ij = dO_i·v_j        D_i = sum_d dO_id O_id
//   dS_ij = P_ij (dP_ij - D_i)    dQ_i = sum_j dS_ij k_j / sqrt(D)    dK_j = sum_i dS_ij q_i / sqrt(D)
// `kata grade` compiles this file with NVRTC. The default launch plan runs grad_kv with one thread
// per key row j, then grad_q with one thread per query row i: blockIdx.y is b*H + h, the row is
// blockIdx.x * blockDim.x + threadIdx.x.
#define MAX_D 128

extern "C" __global__ void grad_kv(const float* __restrict__ Q, const float* __restrict__ K,
                                   const float* __restrict__ V, const float* __restrict__ O,
                                   const float* __restrict__ dO, const float* __restrict__ LSE,
                                   float* __restrict__ dK, float* __restrict__ dV, int S, int D, int causal)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;  // key row
    const size_t base = (size_t)blockIdx.y * S * D;      // this (batch, head)'s S×D slice
    const float* const lse = LSE + (size_t)blockIdx.y * S;

    // TODO: rows past S have nothing to do (the grid is rounded up).

    // TODO: for every query i that sees key j (causal: i >= j): recompute s_ij and P_ij from
    //       Q, K and lse[i]; dP_ij = dO_i·v_j; D_i = dO_i·O_i; dS_ij = P_ij (dP_ij - D_i);
    //       accumulate dV_j += P_ij dO_i and dK_j += dS_ij q_i (MAX_D floats each, in registers).

    // TODO: write dV_j and dK_j / sqrt(D).
    (void)Q; (void)K; (void)V; (void)O; (void)dO; (void)lse; (void)dK; (void)dV; (void)j; (void)base; (void)causal;
}

extern "C" __global__ void grad_q(const float* __restrict__ Q, const float* __restrict__ K,
                                  const float* __restrict__ V, const float* __restrict__ O,
                                  const float* __restrict__ dO, const float* __restrict__ LSE,
                                  float* __restrict__ dQ, int S, int D, int causal)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;  // query row
    const size_t base = (size_t)blockIdx.y * S * D;
    const float* const lse = LSE + (size_t)blockIdx.y * S;

    // TODO: rows past S have nothing to do.

    // TODO: D_i = dO_i·O_i; for every key j that query i sees: P_ij, dP_ij, dS_ij as in grad_kv;
    //       accumulate dQ_i += dS_ij k_j.

    // TODO: write dQ_i / sqrt(D).
    (void)Q; (void)K; (void)V; (void)O; (void)dO; (void)lse; (void)dQ; (void)i; (void)base; (void)causal;
}

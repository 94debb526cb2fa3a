// One AdamW step over T float32 tensors. Tensor i is p[offsets[i] .. offsets[i] + sizes[i]) of the
// arena (likewise g, m, v); the elements between tensors are padding and must not change.
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   p = p * (1 - lr * wd[i]) - (lr / (1 - beta1^t)) * m / (sqrt(v / (1 - beta2^t)) + eps)
// `kata grade` compiles this file with NVRTC. The default launch plan gives each tensor one block.
extern "C" __global__ void adamw(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                                 float* __restrict__ v, const long long* __restrict__ offsets,
                                 const long long* __restrict__ sizes, const float* __restrict__ wd,
                                 int T, long long N, float lr, float beta1, float beta2, float eps, int t)
{
    const int i = blockIdx.x;  // this block's tensor
    if (i >= T) return;
    const long long start = offsets[i], size = sizes[i];

    // TODO: the bias corrections 1 - beta1^t and 1 - beta2^t (powf), or pass them from launch.py.

    // TODO: loop over the tensor's elements (threadIdx.x, threadIdx.x + blockDim.x, ... < size),
    //       update m, v and p at start + e. Weight decay multiplies p; it never enters g, m or v.

    // TODO (fast): one block per tensor idles the GPU behind the largest tensor. Split tensors
    //       into chunks and give blocks chunks (see the hints), in one or two launches.
    (void)p; (void)g; (void)m; (void)v; (void)wd; (void)N; (void)lr; (void)beta1; (void)beta2;
    (void)eps; (void)t; (void)start; (void)size;
}

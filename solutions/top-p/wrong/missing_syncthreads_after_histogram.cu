// kata-expect: race-raw
// The digit search reads the mass histogram while other warps may still be adding to it; the histogram pass must end with a barrier.
// Top-p (nucleus) sampling without a sort: a block takes one row at a time and finds, by two
// radix selects weighted by probability mass, first the nucleus's edge and then the sampled token.
//
// Why: sorting 128256 logits per row to read off one token is what torch does and costs far more
// than reading the row. The nucleus is {logits above a threshold theta} plus the first n (by index)
// of the logits equal to theta; theta is found like the k-th largest in a radix select, except
// that the histogram counts mass exp((x - max) / T), not elements, and the digit search stops where
// the mass from the top reaches p * total. The sample is the same search again with the target
// u * mass(nucleus) and a strict ">" (the first token whose cumulative mass exceeds the target).
//
// Passes over the row (it does not fit on chip: 513 KB): 1 for the max, 1 for the top digit's
// histogram (shared by both searches), 2 more (11 and 10 bits) for theta, 2 for the token, and a
// last one only when the token is one of several equal logits that is not the first by index.
// Six reads of a row: the plan keeps few enough rows in flight that the re-reads hit L2.
//
// Keys: flip all bits of negative floats, set the sign bit of positives, so unsigned order is float
// order, once -0.0 is made +0.0 (equal logits must share a key). The order is the logits' own
// (never the rounded probabilities', which tie where the logits do not). Every pass computes a
// token's mass with the same expression, so the masses the searches compare are the same numbers.
#define THREADS 1024
#define BINS 2048
#define WARPS (THREADS / 32)

__device__ __forceinline__ unsigned key_of(float f)
{
    const unsigned u = __float_as_uint(f + 0.0f);  // -0.0 + 0.0 = +0.0: the two zeros are one logit
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float value_of(unsigned key)
{
    return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

// f(index, value) for every element of the row; float4 loads when rows stay 16-byte aligned,
// four of them in flight per thread (64 KB per block: enough to cover L2's latency at full rate).
template <typename F>
__device__ __forceinline__ void over_row(const float* __restrict__ x, int V, F f)
{
    if ((V & 3) == 0) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        const int n4 = V / 4;
        int i = threadIdx.x;
        for (; i + 3 * THREADS < n4; i += 4 * THREADS) {
            float4 v[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) v[u] = x4[i + u * THREADS];
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const int j = 4 * (i + u * THREADS);
                f(j, v[u].x);
                f(j + 1, v[u].y);
                f(j + 2, v[u].z);
                f(j + 3, v[u].w);
            }
        }
        for (; i < n4; i += THREADS) {
            const float4 v = x4[i];
            f(4 * i, v.x);
            f(4 * i + 1, v.y);
            f(4 * i + 2, v.z);
            f(4 * i + 3, v.w);
        }
    } else {
        for (int i = threadIdx.x; i < V; i += THREADS) f(i, x[i]);
    }
}

struct Shared {
    float mass[BINS];     // this pass's histogram of mass per digit
    float first[BINS];    // the first pass's histogram, reused by the second search
    unsigned cnt[BINS];   // last pass only: elements per digit (they are equal logits)
    int lowest[BINS];     // last pass only: their lowest index
    float warp_sum[WARPS];
    float above, bin_mass;
    int pick, low, found;
};

// Thread t owns digits d0 = BINS-1-2t and d0-1 (thread 0 the largest keys). Picks the largest
// digit with mass whose mass from the top, added to `above`, reaches thr (strict: exceeds it); if
// rounding leaves every digit short, the smallest digit with any mass. Returns it; s.above becomes the mass
// of everything above it, s.bin_mass its own. Ends synchronised.
__device__ int find_digit(Shared& s, const float* hist, float above, float thr, bool strict)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int d0 = BINS - 1 - 2 * threadIdx.x;
    const float a = hist[d0], b = hist[d0 - 1];
    float incl = a + b;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const float t = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += t;
    }
    if (lane == 31) s.warp_sum[warp] = incl;
    if (threadIdx.x == 0) {
        s.pick = -1;
        s.low = BINS;
    }
    __syncthreads();
    float before = 0.0f;
    for (int w = 0; w < warp; ++w) before += s.warp_sum[w];
    const float excl = above + before + (incl - (a + b));
    const float c0 = excl + a, c1 = c0 + b;
    // Only digits that hold mass: threads round their prefix sums in different orders, so an
    // empty digit's prefix can already read >= thr, and an empty digit has no keys to refine.
    if (a > 0.0f && (strict ? c0 > thr : c0 >= thr)) atomicMax(&s.pick, d0);
    else if (b > 0.0f && (strict ? c1 > thr : c1 >= thr)) atomicMax(&s.pick, d0 - 1);
    if (b > 0.0f) atomicMin(&s.low, d0 - 1);
    else if (a > 0.0f) atomicMin(&s.low, d0);
    __syncthreads();
    const int d = s.pick >= 0 ? s.pick : s.low;
    if (d == d0) {
        s.above = excl;
        s.bin_mass = a;
    } else if (d == d0 - 1) {
        s.above = c0;
        s.bin_mass = b;
    }
    __syncthreads();
    return d;
}

// Radix select weighted by mass, resumed after the first digit `d1` (whose histogram is s.first):
// the key of the element where the mass from the top reaches thr, the mass above that key, and
// (in s.cnt / s.lowest at the returned key's last digit) how many elements equal it.
__device__ unsigned select_key(Shared& s, const float* __restrict__ x, int V, float m, float inv_t,
                               float thr, bool strict, float* above, int* cnt, int* lowest)
{
    int d = find_digit(s, s.first, 0.0f, thr, strict);
    unsigned prefix = (unsigned)d << 21, mask = 0xffe00000u;
    float acc = s.above;
#pragma unroll 1
    for (int pass = 0; pass < 2; ++pass) {
        const int shift = pass == 0 ? 10 : 0;
        const bool last = pass == 1;
        for (int b = threadIdx.x; b < BINS; b += THREADS) {
            s.mass[b] = 0.0f;
            s.cnt[b] = 0u;
            s.lowest[b] = 0x7fffffff;
        }
        __syncthreads();
        over_row(x, V, [&](int i, float v) {
            const unsigned k = key_of(v);
            if ((k & mask) == prefix) {
                const int dig = (k >> shift) & (last ? 1023 : 2047);
                atomicAdd(&s.mass[dig], __expf((v - m) * inv_t));
                if (last) {
                    atomicAdd(&s.cnt[dig], 1u);
                    atomicMin(&s.lowest[dig], i);
                }
            }
        });
        d = find_digit(s, s.mass, acc, thr, strict);
        acc = s.above;
        prefix |= (unsigned)d << shift;
        mask |= (last ? 1023u : 2047u) << shift;
    }
    *above = acc;
    *cnt = (int)s.cnt[d];
    *lowest = s.lowest[d];
    __syncthreads();  // the caller's next pass rewrites s.cnt
    return prefix;
}

// Row r's token. Starts and ends with the block synchronised (s is reused by the next row).
__device__ void sample_row(Shared& s, const float* __restrict__ logits, const float* __restrict__ temperature,
                           const float* __restrict__ top_p, const float* __restrict__ uniform,
                           int* __restrict__ token, int V, int r)
{
    const float* x = logits + (size_t)r * V;
    const float inv_t = 1.0f / temperature[r];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    // Pass 1: the row's max, so exp never overflows (logits reach 1e4, temperatures 1e-4).
    float m = -__int_as_float(0x7f800000);  // -inf
    over_row(x, V, [&](int, float v) { m = fmaxf(m, v); });
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (lane == 0) s.warp_sum[warp] = m;
    for (int b = threadIdx.x; b < BINS; b += THREADS) s.first[b] = 0.0f;
    __syncthreads();
    m = s.warp_sum[0];
    for (int w = 1; w < WARPS; ++w) m = fmaxf(m, s.warp_sum[w]);

    // Pass 2: the top 11 bits' mass histogram over the whole row; both searches start from it,
    // and its sum is the total the threshold p * total refers to.
    over_row(x, V, [&](int, float v) { atomicAdd(&s.first[key_of(v) >> 21], __expf((v - m) * inv_t)); });
    __syncthreads();
    float total = 0.0f;
    {
        float t = s.first[2 * threadIdx.x] + s.first[2 * threadIdx.x + 1];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
        __syncthreads();  // every warp has read m from warp_sum
        if (lane == 0) s.warp_sum[warp] = t;
        __syncthreads();
        for (int w = 0; w < WARPS; ++w) total += s.warp_sum[w];
        __syncthreads();  // before the digit search rewrites warp_sum
    }

    // The nucleus: everything above theta plus the first n of the cnt logits equal to theta.
    float above_t;
    int cnt_t, low_t;
    const float thr = top_p[r] * total;
    const unsigned theta = select_key(s, x, V, m, inv_t, thr, false, &above_t, &cnt_t, &low_t);
    const float w_t = __expf((value_of(theta) - m) * inv_t);
    const int n = (int)fminf(fmaxf(ceilf((thr - above_t) / w_t), 1.0f), (float)cnt_t);
    const float nucleus = above_t + (float)n * w_t;

    // The sample: the first token (in the nucleus's order) whose cumulative mass exceeds target.
    const float target = uniform[r] * nucleus;
    float above_k;
    int cnt_k, low_k;
    unsigned kappa = select_key(s, x, V, m, inv_t, target, true, &above_k, &cnt_k, &low_k);
    float w_k = __expf((value_of(kappa) - m) * inv_t);
    if (kappa <= theta) {  // at the nucleus's edge (or past it, by rounding): only its n tokens
        kappa = theta;
        above_k = above_t;
        w_k = w_t;
        cnt_k = n;
        low_k = low_t;
    }
    const int i = (int)fminf(fmaxf(floorf((target - above_k) / w_k), 0.0f), (float)(cnt_k - 1));
    if (i == 0) {
        if (threadIdx.x == 0) token[r] = low_k;
        return;  // uniform across the block: every thread computed the same i
    }
    // Rare: the i-th (by index) of several equal logits. Walk the row in index order, tile by tile,
    // counting occurrences with ballots.
    if (threadIdx.x == 0) s.found = 0;
    const float want = value_of(kappa);
    int seen = 0;
    for (int base = 0; base < V; base += THREADS) {
        const int j = base + threadIdx.x;
        const bool eq = j < V && x[j] == want;
        const unsigned ballot = __ballot_sync(0xffffffffu, eq);
        if (lane == 0) s.warp_sum[warp] = __int_as_float(__popc(ballot));
        __syncthreads();
        int before = seen;
        for (int w = 0; w < warp; ++w) before += __float_as_int(s.warp_sum[w]);
        before += __popc(ballot & ((1u << lane) - 1u));
        if (eq && before == i) {
            token[r] = j;
            s.found = 1;
        }
        for (int w = 0; w < WARPS; ++w) seen += __float_as_int(s.warp_sum[w]);
        __syncthreads();
        if (s.found) break;
    }
}

// Block b samples rows b, b + gridDim.x, ... The plan picks how many rows are in flight: few
// enough that their logits stay in L2 across the six passes (launch.py).
extern "C" __global__ void __launch_bounds__(THREADS)
top_p_sample(const float* __restrict__ logits, const float* __restrict__ temperature,
             const float* __restrict__ top_p, const float* __restrict__ uniform,
             int* __restrict__ token, int R, int V)
{
    __shared__ Shared s;
    for (int r = blockIdx.x; r < R; r += gridDim.x) {
        sample_row(s, logits, temperature, top_p, uniform, token, V, r);
        __syncthreads();
    }
}

// Top-p (nucleus) sampling without a sort: a block takes one row at a time and finds, by two
// radix selects weighted by probability mass, first the nucleus's edge and then the sampled token.
//
// Why: sorting 128256 logits per row to read off one token is what torch does and costs far more
// than reading the row. The nucleus is {logits above a threshold theta} plus the first n (by index)
// of the logits equal to theta; theta is found like the k-th largest in a radix select, except
// that the histogram adds mass exp((x - max) / T), not 1, and the digit search stops where the
// mass from the top reaches p * total. The sample is the same search again with the target
// u * mass(nucleus) and a strict ">" (the first token whose cumulative mass exceeds the target).
//
// The first digit is linear in the log-probability, not the key's top bits: bin (max - x) / T
// over the row's range in 1024 steps (monotone in x, so bins are ranges of the order). A row's
// logits crowd a few binades, so the key's top 11 bits put most of a row in a handful of bins and
// the lanes of a warp would collide there on every atomic; linear bins spread them. The bin found
// is then refined on the exact key, but only over the bits that vary inside it (its smallest and
// largest key are kept per bin), one or two passes of <= 11 bits for narrow bins.
//
// Passes over the row (it does not fit on chip: 513 KB): 1 for the max and min, 1 for the linear
// histogram (shared by both searches), 1-3 refining theta, 1-3 refining the token, and a last one
// only when the token is one of several equal logits that is not the first by index. About six
// reads of a row: the plan keeps few enough rows in flight that the re-reads hit L2.
//
// Masses are fixed point: round(exp(...) * 2^40) in 64-bit integers. Shared-memory float atomicAdd
// is a compare-and-swap loop on this GPU (lanes adding to one bin retry one by one, and a row's
// logits crowd a few bins), 64-bit integer atomicAdd is one native instruction; and integer sums
// are exact, so every search sees the same totals in any order and its prefix sums are monotone.
// A row's total is at most V * 2^40 < 2^58; a mass below 2^-41 rounds to 0, far inside the
// check's 1e-5, and such tokens take part in nothing (they could never be sampled).
//
// Keys: flip all bits of negative floats, set the sign bit of positives, so unsigned order is float
// order, once -0.0 is made +0.0 (equal logits must share a key). The order is the logits' own
// (never the rounded probabilities', which tie where the logits do not).
#define THREADS 1024
#define BINS 2048   // refining digits (<= 11 bits)
#define LBINS 1024  // linear first digits
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

typedef unsigned long long u64;

// A token's mass, the same expression in every pass.
__device__ __forceinline__ u64 mass_of(float v, float m, float inv_t)
{
    return __float2ull_rn(__expf((v - m) * inv_t) * 1099511627776.0f);  // * 2^40
}

// The linear first digit: 1023 at the row's max, down to 0 at k * (max - x) >= 1023 (NaN, from a
// -inf logit times k = 0, also lands at 0). Non-decreasing in x.
__device__ __forceinline__ int lin_digit(float v, float m, float k)
{
    const float z = (m - v) * k;
    return LBINS - 1 - (z < (float)(LBINS - 1) ? (int)z : LBINS - 1);
}

struct Shared {
    u64 first[LBINS];      // the linear histogram of mass, kept for the second search
    unsigned kmin[LBINS];  // per linear bin: its smallest and largest key
    unsigned kmax[LBINS];
    u64 mass[BINS];        // a refining pass's histogram of mass per digit
    unsigned cnt[1024];    // last refining pass (<= 10-bit digits): elements per digit (equal logits)
    int lowest[1024];      // last refining pass: their lowest index
    u64 warp_sum[WARPS];
    float warp_max[WARPS], warp_min[WARPS];
    int warp_cnt[WARPS];
    u64 above;
    int pick, low, found;
};

__device__ __forceinline__ u64 shfl_up64(u64 v, int o)
{
    return ((u64)__shfl_up_sync(0xffffffffu, (unsigned)(v >> 32), o) << 32) |
           __shfl_up_sync(0xffffffffu, (unsigned)v, o);
}

// Over nb <= 2048 digits, thread t owns d0 = nb-1-2t and d0-1 (thread 0 the largest keys). Picks
// the largest digit holding mass whose mass from the top, added to `above`, reaches thr (strict:
// exceeds it); if none does (never, with exact sums and thr <= total; a guard), the smallest
// digit with any mass. Returns it; s.above becomes the mass of everything above it. Ends
// synchronised.
__device__ int find_digit(Shared& s, const u64* hist, int nb, u64 above, u64 thr, bool strict)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int d0 = nb - 1 - 2 * threadIdx.x;
    const u64 a = d0 >= 0 ? hist[d0] : 0, b = d0 >= 1 ? hist[d0 - 1] : 0;
    u64 incl = a + b;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const u64 t = shfl_up64(incl, o);
        if (lane >= o) incl += t;
    }
    if (lane == 31) s.warp_sum[warp] = incl;
    if (threadIdx.x == 0) {
        s.pick = -1;
        s.low = BINS;
    }
    __syncthreads();
    u64 before = 0;
    for (int w = 0; w < warp; ++w) before += s.warp_sum[w];
    const u64 excl = above + before + (incl - (a + b));
    const u64 c0 = excl + a, c1 = c0 + b;
    if (a > 0 && (strict ? c0 > thr : c0 >= thr)) atomicMax(&s.pick, d0);
    else if (b > 0 && (strict ? c1 > thr : c1 >= thr)) atomicMax(&s.pick, d0 - 1);
    if (b > 0) atomicMin(&s.low, d0 - 1);
    else if (a > 0) atomicMin(&s.low, d0);
    __syncthreads();
    const int d = s.pick >= 0 ? s.pick : s.low;
    if (d == d0) s.above = excl;
    else if (d == d0 - 1) s.above = c0;
    __syncthreads();
    return d;
}

// Radix select weighted by mass: the linear digit from s.first, then the exact key inside that
// bin, over the bits its keys do not share (the last pass <= 10 bits). Returns the key where the
// mass from the top reaches thr (strict: exceeds it), the mass above it, how many elements equal
// it and the lowest index among them.
__device__ unsigned select_key(Shared& s, const float* __restrict__ x, int V, float m, float inv_t,
                               u64 thr, bool strict, u64* above, int* cnt, int* lowest)
{
    const int D = find_digit(s, s.first, LBINS, 0, thr, strict);
    const unsigned lo = s.kmin[D], hi = s.kmax[D];
    u64 acc = s.above;
    // The low nb bits vary inside the bin (at least 1: the last pass also counts equal keys).
    const int nb = lo == hi ? 1 : 32 - __clz(lo ^ hi);
    // Digit widths from the top: the rest (<= 11 bits), 11, then the last 10 (or all, if fewer).
    const int npass = nb <= 10 ? 1 : (nb <= 21 ? 2 : 3);
    unsigned prefix = nb == 32 ? 0u : lo & ~((1u << nb) - 1u);
    int shift = nb, d = 0;
#pragma unroll 1
    for (int pass = 0; pass < npass; ++pass) {
        const bool last = pass == npass - 1;
        const int width = last ? shift : (pass == 0 ? nb - (npass == 2 ? 10 : 21) : 11);
        shift = last ? 0 : shift - width;
        const unsigned dmask = (1u << width) - 1u;
        const unsigned above_mask = width + shift >= 32 ? 0u : ~((1u << (width + shift)) - 1u);
        for (int b = threadIdx.x; b < BINS; b += THREADS) s.mass[b] = 0;
        for (int b = threadIdx.x; b < 1024; b += THREADS) {
            s.cnt[b] = 0u;
            s.lowest[b] = 0x7fffffff;
        }
        __syncthreads();
        over_row(x, V, [&](int i, float v) {
            const unsigned k = key_of(v);
            // In the bin (keys in [lo, hi] are exactly its tokens with mass) and on the prefix.
            if (k >= lo && k <= hi && (k & above_mask) == prefix) {
                const int dig = (k >> shift) & dmask;
                atomicAdd(&s.mass[dig], mass_of(v, m, inv_t));
                if (last) {
                    atomicAdd(&s.cnt[dig], 1u);
                    atomicMin(&s.lowest[dig], i);
                }
            }
        });
        __syncthreads();
        d = find_digit(s, s.mass, (int)dmask + 1, acc, thr, strict);
        acc = s.above;
        prefix |= (unsigned)d << shift;
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

    // Pass 1: the row's max (so exp never overflows: logits reach 1e4, temperatures 1e-4) and its
    // smallest finite logit (the linear bins' range).
    const float inf = __int_as_float(0x7f800000);
    float m = -inf, mn = inf;
    over_row(x, V, [&](int, float v) {
        m = fmaxf(m, v);
        if (v > -inf) mn = fminf(mn, v);
    });
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        mn = fminf(mn, __shfl_xor_sync(0xffffffffu, mn, o));
    }
    if (lane == 0) {
        s.warp_max[warp] = m;
        s.warp_min[warp] = mn;
    }
    for (int b = threadIdx.x; b < LBINS; b += THREADS) {
        s.first[b] = 0;
        s.kmin[b] = 0xffffffffu;
        s.kmax[b] = 0u;
    }
    __syncthreads();
    m = s.warp_max[0];
    mn = s.warp_min[0];
    for (int w = 1; w < WARPS; ++w) {
        m = fmaxf(m, s.warp_max[w]);
        mn = fminf(mn, s.warp_min[w]);
    }
    // 1023 bins over the row's range of (max - x) / T, at most 28.5 (masses past it round to 0).
    const float range = fminf((m - mn) * inv_t, 28.5f);
    const float k_lin = range > 0.0f ? (float)(LBINS - 1) / range * inv_t : 0.0f;

    // Pass 2: the linear histogram of mass over the whole row, with each bin's key range; both
    // searches start from it, and its sum is the total the threshold p * total refers to.
    over_row(x, V, [&](int, float v) {
        const u64 q = mass_of(v, m, inv_t);
        if (q) {
            const int d = lin_digit(v, m, k_lin);
            const unsigned key = key_of(v);
            atomicAdd(&s.first[d], q);
            atomicMin(&s.kmin[d], key);
            atomicMax(&s.kmax[d], key);
        }
    });
    __syncthreads();
    u64 total = threadIdx.x < LBINS ? s.first[threadIdx.x] : 0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) total += __shfl_xor_sync(0xffffffffu, total, o);
    if (lane == 0) s.warp_sum[warp] = total;
    __syncthreads();
    total = 0;
    for (int w = 0; w < WARPS; ++w) total += s.warp_sum[w];
    __syncthreads();  // before the digit search rewrites warp_sum

    // The nucleus: everything above theta plus the first n of the cnt logits equal to theta;
    // "reaches p" is mass >= p * total, i.e. >= its ceiling in integers.
    u64 above_t;
    int cnt_t, low_t;
    const u64 thr = (u64)ceil((double)top_p[r] * (double)total);
    const unsigned theta = select_key(s, x, V, m, inv_t, thr, false, &above_t, &cnt_t, &low_t);
    const u64 w_t = mass_of(value_of(theta), m, inv_t);
    const u64 rem = thr > above_t ? thr - above_t : 0;
    const int n = (int)min(max((rem + w_t - 1) / w_t, (u64)1), (u64)cnt_t);
    const u64 nucleus = above_t + (u64)n * w_t;

    // The sample: the first token (in the nucleus's order) whose cumulative mass exceeds target
    // (u < 1, so target < nucleus).
    const u64 target = (u64)((double)uniform[r] * (double)nucleus);
    u64 above_k;
    int cnt_k, low_k;
    unsigned kappa = select_key(s, x, V, m, inv_t, target, true, &above_k, &cnt_k, &low_k);
    u64 w_k = mass_of(value_of(kappa), m, inv_t);
    if (kappa <= theta) {  // at the nucleus's edge: only its first n tokens
        kappa = theta;
        above_k = above_t;
        w_k = w_t;
        cnt_k = n;
        low_k = low_t;
    }
    const u64 into = target > above_k ? target - above_k : 0;
    const int i = (int)min(into / w_k, (u64)(cnt_k - 1));
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
        if (lane == 0) s.warp_cnt[warp] = __popc(ballot);
        __syncthreads();
        int before = seen;
        for (int w = 0; w < warp; ++w) before += s.warp_cnt[w];
        before += __popc(ballot & ((1u << lane) - 1u));
        if (eq && before == i) {
            token[r] = j;
            s.found = 1;
        }
        for (int w = 0; w < WARPS; ++w) seen += s.warp_cnt[w];
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

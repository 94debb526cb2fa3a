"""Paged decode attention: a scattered, shared, NaN-poisoned fp16 block pool, the float64 attention
per (sequence, KV head), the referenced KV bytes, and the per-element error scale."""
import weakref

import numpy as np

BLOCK = 16  # tokens per cache block
D = 128  # head size


def _lengths(rng, B: int, Lmax: int, dist: str) -> np.ndarray:
    if dist == "equal":
        lens = np.full(B, Lmax)
    elif dist == "shared":
        # Every sequence at least half of Lmax long: a long common prefix, then its own tokens.
        lens = Lmax // 2 + rng.integers(0, Lmax - Lmax // 2 + 1, B)
    else:
        # Log-uniform lengths (power-law: most sequences short, a few long), with the extremes
        # 1 and Lmax present whenever the batch has room for them.
        lens = np.exp(rng.uniform(0.0, np.log(Lmax + 1), B)).astype(np.int64).clip(1, Lmax)
        if B >= 2:
            lens[rng.permutation(B)[:2]] = [1, Lmax]
    return lens.astype(np.int64)


def work(inputs: dict, **_) -> np.ndarray:
    """Per sequence, its tokens: the loop a sequence's thread, warp or block walks (the H200 model's heavy rows)."""
    return inputs["seq_lens"].astype(np.int64)


def heaviest(rng: np.random.Generator, B: int, Lmax: int, dist: str = "powerlaw", **_) -> int:
    """The longest sequence generate(rng, ...) makes, without the pool: its first draws are the lengths."""
    return int(_lengths(rng, B, Lmax, dist).max())


def generate(rng: np.random.Generator, B: int, Hkv: int, G: int, Lmax: int, dist: str = "powerlaw", **_) -> dict:
    Hq = Hkv * G
    lens = _lengths(rng, B, Lmax, dist)
    nblk = -(-lens // BLOCK)
    width = int(-(-Lmax // BLOCK))
    # A shared prefix (a system prompt): the first P blocks of every sequence are the same blocks.
    # ("shared": all the shortest sequence's blocks; "equal": none.)
    P = {"equal": 0, "shared": int(nblk.min())}.get(dist, int(rng.integers(1, nblk.min() + 1)))
    own = [max(0, int(n) - P) for n in nblk]
    free = B  # blocks no sequence references, filled with NaN: a wrong table lookup reads them
    N = P + sum(own) + free
    ids = rng.permutation(N).astype(np.int32)  # logical blocks scattered over the pool
    table = np.full((B, width), 1 << 30, np.int32)  # entries past a sequence's blocks: garbage
    next_id = P
    for b in range(B):
        n_shared = min(P, int(nblk[b]))
        table[b, :n_shared] = ids[:n_shared]
        table[b, n_shared:nblk[b]] = ids[next_id:next_id + own[b]]
        next_id += own[b]
    shape = (N, Hkv, BLOCK, D)
    scale = 3.0 if dist == "peaked" else 1.0  # peaked: logits spread over tens of units
    # float32 draws (a bench pool holds ~2 * 10^8 values of each): a per-head key component, values
    # with a non-zero mean and a scale per head, so mixing heads is off by far more than the bound.
    k = rng.standard_normal(shape, dtype=np.float32)
    k += rng.normal(0.0, 0.5, (1, Hkv, 1, D)).astype(np.float32)  # in place: a second pool costs seconds
    v = rng.standard_normal(shape, dtype=np.float32)
    v += 0.5
    v *= rng.uniform(0.5, 4.0, (1, Hkv, 1, 1)).astype(np.float32)
    q = rng.normal(0.2, scale, (B, Hq, D))
    if dist == "shifted":
        # A common key component worth ~110 in every logit: softmax ignores it, exp(110) in
        # float32 does not (it overflows without the running max).
        k += 8.0
        q += 1.0
    k, v = k.astype(np.float16), v.astype(np.float16)
    used = np.zeros((N, BLOCK), bool)  # slots some sequence reads
    for b in range(B):
        for j in range(int(nblk[b])):
            used[table[b, j], :min(BLOCK, int(lens[b]) - j * BLOCK)] = True
    # A kernel that reads past a sequence's length sees NaN keys and values: masking the score to
    # -inf is not enough there, since p = 0 times a NaN value is NaN.
    k.transpose(0, 2, 1, 3)[~used] = np.nan
    v.transpose(0, 2, 1, 3)[~used] = np.nan
    return {"q": q.astype(np.float32), "k_cache": k, "v_cache": v,
            "block_table": table, "seq_lens": lens.astype(np.int32), "num_blocks": N, "max_blocks": width}


def _attend(inputs: dict, B: int, Hkv: int, G: int, with_scale: bool) -> tuple:
    """out[b, h] = softmax(q[b, h] . K_b^T / sqrt(D)) @ V_b in float64, K_b and V_b the sequence's
    tokens gathered through its block table; query head h reads KV head h // G. With with_scale,
    also the same softmax weights times |V_b| (the error scale), from the same gather and softmax:
    a bench case's reference and scale took two whole passes before."""
    Hq = Hkv * G
    table = inputs["block_table"].reshape(B, -1)
    lens = inputs["seq_lens"]
    kc = inputs["k_cache"].reshape(-1, Hkv, BLOCK, D)
    vc = inputs["v_cache"].reshape(-1, Hkv, BLOCK, D)
    q = inputs["q"].reshape(B, Hkv, G, D).astype(np.float64)
    out = np.empty((B, Hkv, G, D))
    scale = np.empty((B, Hkv, G, D)) if with_scale else None
    for b in range(B):
        L = int(lens[b])
        blocks = table[b, :-(-L // BLOCK)]
        kb = kc[blocks].astype(np.float64).transpose(1, 0, 2, 3).reshape(Hkv, -1, D)[:, :L]
        vb = vc[blocks].astype(np.float64).transpose(1, 0, 2, 3).reshape(Hkv, -1, D)[:, :L]
        s = np.einsum("hgd,hld->hgl", q[b], kb) / np.sqrt(D)
        s -= s.max(axis=2, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=2, keepdims=True)
        out[b] = np.einsum("hgl,hld->hgd", p, vb)
        if with_scale:
            scale[b] = np.einsum("hgl,hld->hgd", p, np.abs(vb))
    return out.reshape(B, Hq, D), (scale.reshape(B, Hq, D) if with_scale else None)


#: (the inputs, weakly held, (B, Hkv, G), the error scale) of the last reference: error_scale uses
#: it only for the very same arrays, still alive; replaced whole, so a reader in another thread
#: sees one reference's triple or another's, never a mix
_LAST = None


def _same_inputs(refs: dict, inputs: dict) -> bool:
    return set(refs) == set(inputs) and all(
        (r() is inputs[n]) if isinstance(r, weakref.ref) else r == inputs[n] for n, r in refs.items())


def reference(inputs: dict, B: int, Hkv: int, G: int, **_) -> dict:
    global _LAST
    out, scale = _attend(inputs, B, Hkv, G, with_scale=True)
    try:
        refs = {n: weakref.ref(v) if isinstance(v, np.ndarray) else v for n, v in inputs.items()}
        _LAST = (refs, (B, Hkv, G), scale)
    except TypeError:  # an array type without weak references: error_scale computes its own
        _LAST = None
    return {"out": out}


def error_scale(inputs: dict, B: int, Hkv: int, G: int, **_) -> dict:
    # As in attention: float32 errors in the logits and in exp move each p_j by a small relative
    # amount, so out[d]'s error scales with sum_j p_j |v_jd|; c = 1000 allows about 1.2e-4 of it.
    last = _LAST
    if last is not None and last[1] == (B, Hkv, G) and _same_inputs(last[0], inputs):
        return {"out": last[2]}
    return {"out": _attend(inputs, B, Hkv, G, with_scale=True)[1]}


def cost(B: int, Hkv: int, G: int, num_blocks: int, max_blocks: int, **_) -> dict:
    # The KV bytes actually referenced: every block some sequence reads (a shared prefix block
    # once), K and V, fp16; the B free blocks of the pool are not. Plus q, out, the tables.
    kv = 2 * (num_blocks - B) * BLOCK * Hkv * D * 2
    Hq = Hkv * G
    return {"bytes": kv + 8 * B * Hq * D + 4 * B * (max_blocks + 1), "flops": 4 * (num_blocks - B) * BLOCK * Hq * D}


def baseline(torch, inputs: dict, B: int, Hkv: int, G: int, **_):
    # What a user without a paged kernel writes: gather every sequence's blocks into a padded
    # [B, Hkv, max_blocks * 16, D] cache, then PyTorch's SDPA in fp16 with a length mask. The G
    # query heads of a KV head are its G "queries" (the GQA layout without copying K and V).
    num_blocks, max_blocks = int(inputs["num_blocks"]), int(inputs["max_blocks"])  # data, not case keys
    kc = inputs["k_cache"].reshape(num_blocks, Hkv, BLOCK, D)
    vc = inputs["v_cache"].reshape(num_blocks, Hkv, BLOCK, D)
    table = inputs["block_table"].reshape(B, max_blocks).long()
    blocks = (inputs["seq_lens"] + BLOCK - 1) // BLOCK
    valid = torch.arange(max_blocks, device=table.device)[None, :] < blocks[:, None]
    table = torch.where(valid, table, torch.zeros_like(table))  # padding entries are garbage ids
    q = inputs["q"].reshape(B, Hkv, G, D).half()
    pos = torch.arange(max_blocks * BLOCK, device=table.device)
    mask = (pos[None, :] < inputs["seq_lens"][:, None].long())[:, None, None, :]
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def gathered(cache):
        return cache[table].permute(0, 2, 1, 3, 4).reshape(B, Hkv, max_blocks * BLOCK, D)

    def run():
        # Slots past a sequence's length hold NaN (unused cache): zero them, as a careful user
        # must (a masked score does not stop 0 * NaN).
        pad = ~mask.transpose(-1, -2)
        k, v = gathered(kc).masked_fill(pad, 0), gathered(vc).masked_fill(pad, 0)
        return sdpa(q, k, v, attn_mask=mask).float()

    return run

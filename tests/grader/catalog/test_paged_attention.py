"""The paged-attention kata's inputs and reference: a scattered, shared, NaN-poisoned pool, GQA head
mapping, the tolerance's reach, and the referenced-bytes cost."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)
KATA = catalog.load("paged-attention")
ref = KATA.reference


def _case(dist, B=3, Hkv=2, G=4, Lmax=200, seed=1):
    params = {"B": B, "Hkv": Hkv, "G": G, "Lmax": Lmax, "dist": dist}
    inputs = ref.generate(np.random.default_rng(seed), **params)
    return params, inputs


def _float32_decode(inputs, B, Hkv, G, kv_head=lambda h, G, Hkv: h // G):
    """Decode attention as a float32 kernel computes it, token by token through the table."""
    table, lens = inputs["block_table"].reshape(B, -1), inputs["seq_lens"]
    kc = inputs["k_cache"].reshape(-1, Hkv, 16, 128)
    vc = inputs["v_cache"].reshape(-1, Hkv, 16, 128)
    q = inputs["q"].reshape(B, Hkv * G, 128)
    out = np.empty_like(q)
    for b in range(B):
        t = np.arange(lens[b])
        blocks = table[b, t // 16]
        for h in range(Hkv * G):
            g = kv_head(h, G, Hkv)
            k = kc[blocks, g, t % 16].astype(np.float32)
            v = vc[blocks, g, t % 16].astype(np.float32)
            s = k @ q[b, h] / np.float32(np.sqrt(128))
            p = np.exp(s - s.max())
            out[b, h] = (p @ v) / p.sum()
    return out


@pytest.mark.parametrize("dist", ["powerlaw", "shared", "shifted", "peaked"])
def test_float32_decode_passes_wrong_head_mapping_fails(dist):
    params, inputs = _case(dist)
    want = ref.reference(inputs, **params)["out"]
    assert np.all(np.isfinite(want))
    bound = KATA.tolerance.c * EPS32 * ref.error_scale(inputs, **params)["out"]
    assert np.all(np.abs(_float32_decode(inputs, 3, 2, 4) - want) <= bound)
    wrong = _float32_decode(inputs, 3, 2, 4, kv_head=lambda h, G, Hkv: h % Hkv)
    assert np.any(~(np.abs(wrong - want) <= bound))


def test_pool_is_scattered_shared_and_poisoned():
    _params, inputs = _case("shared", B=3, Lmax=300)
    table, lens = inputs["block_table"].reshape(3, -1), inputs["seq_lens"]
    nblk = -(-lens // 16)
    assert (table[:, 0] == table[0, 0]).all()  # a common prefix: the same physical blocks
    assert (table[0, 1:nblk[0]] != np.arange(1, nblk[0])).any()  # not laid out in order
    assert all((table[b, nblk[b]:] == 1 << 30).all() for b in range(3))
    kc = inputs["k_cache"].reshape(-1, 2, 16, 128)
    used = np.zeros(kc.shape[0] * 16, bool)  # (block, slot) pairs some sequence reads
    for o in range(3):
        t = np.arange(lens[o])
        used[table[o, t // 16] * 16 + t % 16] = True
    slots = kc.transpose(0, 2, 1, 3).reshape(-1, 2 * 128)
    assert np.isfinite(slots[used]).all() and np.isnan(slots[~used]).all() and (~used).sum() >= 3 * 16
    referenced = np.unique(np.concatenate([table[o, :nblk[o]] for o in range(3)]))
    assert inputs["num_blocks"] == referenced.size + 3  # plus one free (NaN) block per sequence


def test_cost_counts_each_referenced_block_once():
    _params, inputs = _case("shared", B=3, Hkv=2, G=4, Lmax=300)
    c = ref.cost(B=3, Hkv=2, G=4, num_blocks=inputs["num_blocks"], max_blocks=inputs["max_blocks"])
    referenced = inputs["num_blocks"] - 3
    assert c["bytes"] == 2 * referenced * 16 * 2 * 128 * 2 + 8 * 3 * 8 * 128 + 4 * 3 * (inputs["max_blocks"] + 1)


def test_the_error_scale_made_with_the_reference_is_used_only_for_the_same_arrays():
    """reference() makes the error scale in the same pass (one gather and softmax, not two); error_scale
    returns it only for the very arrays it was made from, and computes anew for any others."""
    import numpy as np

    from grader import catalog
    from grader.grading.cases import reference_params
    from grader.grading.check import error_scales

    kata = catalog.load("paged-attention")
    case = dict(B=3, Hkv=2, G=2, Lmax=100, dist="powerlaw")
    ref = kata.reference
    a = ref.generate(np.random.default_rng(5), **case)
    b = ref.generate(np.random.default_rng(6), **case)
    params = reference_params(kata, case, a)
    ref.reference(a, **params)
    reused = error_scales(kata, a, params)["out"]
    fresh_b = error_scales(kata, b, reference_params(kata, case, b))["out"]
    ref.reference(b, **reference_params(kata, case, b))  # a's scale is no longer the last one
    again_a = error_scales(kata, a, params)["out"]
    assert np.array_equal(reused, again_a) and not np.array_equal(reused, fresh_b)
    assert np.array_equal(error_scales(kata, b, reference_params(kata, case, b))["out"], fresh_b)

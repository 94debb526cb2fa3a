"""AdamW: one optimizer step over T parameter tensors of mixed sizes (a few large, many tiny) that
live at 16-byte-aligned offsets of one arena, with padding between them that must stay untouched;
the float64 step, 28 compulsory bytes per parameter, and the float32 error scale."""
import math

import numpy as np

#: padding values in the arena: finite, so a kernel that updates them is seen changing them
PAD = {"p": 7.0, "g": 1000.0, "m": -3.0, "v": 5.0}


def _layout(rng: np.random.Generator, T: int, big: int, large: int):
    """Sizes (a few of [big/2, big], the rest log-uniform skewed to tiny) and 16-byte-aligned
    offsets with 1-4 padding elements after every tensor."""
    large = min(large, T)
    small_max = max(2, big // 8)
    small = np.maximum(1, np.exp(rng.random(T - large) ** 3 * math.log(small_max))).astype(np.int64)
    sizes = np.concatenate([rng.integers(max(1, big // 2), big + 1, large), small]).astype(np.int64)
    sizes = sizes[rng.permutation(T)]
    padded = sizes + (4 - sizes % 4)  # the next multiple of 4, and at least one padding element
    offsets = np.concatenate([[0], np.cumsum(padded)[:-1]]).astype(np.int64)
    return sizes, offsets, int(padded.sum())


def generate(rng: np.random.Generator, T: int, big: int, large: int, t: int, **_) -> dict:
    sizes, offsets, N = _layout(rng, T, big, large)
    arrays = {name: np.full(N, value, np.float32) for name, value in PAD.items()}
    # Per tensor: a gradient scale over five decades (where eps = 1e-8 starts to matter against
    # sqrt(v)), weights of a few scales, moments as a few earlier steps would have left them, and
    # a weight decay of 0 (biases and norms), 0.01 or 0.1 (a model's few parameter groups).
    gscale = (10.0 ** rng.uniform(-5.0, 0.0, T)).astype(np.float32)
    pscale = rng.uniform(0.1, 2.0, T).astype(np.float32)
    wd = rng.choice([0.0, 0.01, 0.1], T, p=[0.3, 0.2, 0.5])
    # float32 draws and gathers: the bench case has ~1.3e8 parameters per array.
    owner = np.repeat(np.arange(T), sizes)  # tensor of each parameter, in tensor order
    n = int(sizes.sum())
    where = np.arange(n) + np.repeat(offsets - (np.cumsum(sizes) - sizes), sizes)  # arena index of each
    normal = lambda: rng.standard_normal(n, dtype=np.float32)
    arrays["p"][where] = pscale[owner] * normal()
    gs = gscale[owner]
    arrays["g"][where] = gs * normal()
    arrays["m"][where] = gs * (np.float32(0.5) * normal())
    arrays["v"][where] = np.square(gs * normal()) * rng.uniform(0.5, 2.0, n).astype(np.float32)
    beta2 = float(rng.choice([0.999, 0.95]))  # the paper's default and the usual LLM setting
    return {**arrays, "offsets": offsets, "sizes": sizes, "wd": wd.astype(np.float32),
            "N": N, "lr": float(np.float32(rng.choice([1e-3, 3e-4]))), "beta1": float(np.float32(0.9)),
            "beta2": float(np.float32(beta2)), "eps": float(np.float32(1e-8))}


def _step(inputs: dict, t: int):
    """The float64 step on the parameters (padding excluded): indices, and the old and new values."""
    sizes, offsets = inputs["sizes"], inputs["offsets"]
    where = np.arange(int(sizes.sum())) + np.repeat(offsets - (np.cumsum(sizes) - sizes), sizes)
    wd = inputs["wd"].astype(np.float64)[np.repeat(np.arange(sizes.size), sizes)]
    p, g, m, v = (inputs[k].astype(np.float64)[where] for k in ("p", "g", "m", "v"))
    lr, b1, b2, eps = (float(inputs[k]) for k in ("lr", "beta1", "beta2", "eps"))
    bc1, bc2 = 1.0 - b1 ** t, 1.0 - b2 ** t
    m1 = b1 * m + (1.0 - b1) * g
    v1 = b2 * v + (1.0 - b2) * g * g
    update = lr * (m1 / bc1) / (np.sqrt(v1 / bc2) + eps)
    p1 = p * (1.0 - lr * wd) - update  # decoupled weight decay: on the weights, not in the gradient
    return where, (p, g, m, v), (p1, m1, v1, update), (b1, b2, bc1, bc2)


def reference(inputs: dict, t: int, **_) -> dict:
    where, _, (p1, m1, v1, _u), _b = _step(inputs, t)
    out = {k: inputs[k].astype(np.float64) for k in ("p", "m", "v")}  # padding stays as it was
    out["p"][where], out["m"][where], out["v"][where] = p1, m1, v1
    return out


def cost(T: int, big: int, large: int, N: int = 0, **_) -> dict:
    # Per parameter: read p, g, m, v (16 B) and write p, m, v (12 B); ~15 FLOPs. The padding (at
    # most 4 elements per tensor) and the tables are not compulsory: counted as the whole arena.
    return {"bytes": 28 * N, "flops": 15 * N}


def error_scale(inputs: dict, t: int, **_) -> dict:
    """Per element, in units of c * eps32: a few roundings of each term of m and v, and of p the
    weights plus the update times (a few roundings + the relative error of a float32 1 - beta^t,
    beta^t / (1 - beta^t) ulps), plus m's own bound carried through the step: where b1 m and
    (1 - b1) g nearly cancel, m's rounding is many ulps of m and so of the update. Padding: 0, it
    must come back bit for bit."""
    where, (p, g, m, v), (_p1, _m1, v1, update), (b1, b2, bc1, bc2) = _step(inputs, t)
    out = {k: np.zeros(inputs[k].size) for k in ("p", "m", "v")}
    out["m"][where] = 2.0 * (b1 * np.abs(m) + (1.0 - b1) * np.abs(g))
    out["v"][where] = 3.0 * (b2 * v + (1.0 - b2) * g * g)
    lr, eps = float(inputs["lr"]), float(inputs["eps"])
    carried = (lr / bc1) * out["m"][where] / (np.sqrt(v1 / bc2) + eps)
    out["p"][where] = 2.0 * np.abs(p) + np.abs(update) * (6.0 + b1 ** t / bc1 + b2 ** t / bc2) + carried
    return out


def baseline(torch, inputs: dict, t: int, **_):
    """torch.optim.AdamW(fused=True) over views of the same arena (its parameters, gradients and
    state are the kata's tensors), starting at step count t."""
    sizes = [int(s) for s in inputs["sizes"].tolist()]
    offsets = [int(o) for o in inputs["offsets"].tolist()]
    wd = [float(w) for w in inputs["wd"].tolist()]
    views = {k: [inputs[k][o:o + s] for o, s in zip(offsets, sizes)] for k in ("p", "g", "m", "v")}
    groups = {}
    for i, w in enumerate(wd):  # one param group per weight decay, as a model's groups would be
        groups.setdefault(w, []).append(i)
    params = []
    for i, p in enumerate(views["p"]):
        p.grad = views["g"][i]
        params.append(p)
    opt = torch.optim.AdamW([{"params": [params[i] for i in idx], "weight_decay": w} for w, idx in groups.items()],
                            lr=float(inputs["lr"]), betas=(float(inputs["beta1"]), float(inputs["beta2"])),
                            eps=float(inputs["eps"]), fused=True)
    for i, p in enumerate(params):
        step = torch.tensor(float(t - 1), dtype=torch.float32, device=p.device)
        opt.state[p] = {"step": step, "exp_avg": views["m"][i], "exp_avg_sq": views["v"][i]}
    # Each call advances the step count by one; the work per call does not depend on it.
    return opt.step

"""The H200 performance model on the CPU: what a learner reads (label, bound, costliest line) for
designs whose GPU behaviour is known, and the pieces it rests on (block samples, cache, loads in
flight). Timings are estimates of arithmetic, never measured here."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from grader import catalog
from grader.performance.model import LABEL, cache, estimate, static
from grader.performance.model.observe import observe_in_worker
from harness.emulator import Emulator
from harness.frontends import nvrtc

ROOT = Path(__file__).resolve().parents[3]


def _estimate(kata_id: str, folder: Path):
    compiled = nvrtc.compile((folder / "kernel.cu").read_text(), "kernel.cu", cubin=True)
    spec = importlib.util.spec_from_file_location("plan_under_test", folder / "launch.py")
    plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plan)
    regs = {k: r.registers for k, r in compiled.resources.items()}
    obs = observe_in_worker(plan.launch, str(folder / "launch.py"), kata_id, compiled.ptx, "kernel.cu", 0,
                            registers=regs)
    return estimate(catalog.load(kata_id), obs, compiled.resources)


def test_reduce_solution_is_estimated_dram_bound_on_its_load_line():
    e = _estimate("reduce", ROOT / "solutions" / "reduce")
    assert e.label == LABEL and "estimate for the NVIDIA H200" in e.headline() and "not a measurement" in e.label
    (case,) = e.cases
    assert case.bound.startswith("DRAM") and case.resource == "dram"
    assert case.lines[0][0] == "kernel.cu:16" and case.lines[0][1] > 0.9  # x4[i], the float4 load
    # the bench input (1 GB) is not made on the CPU: two shapes that fit, extrapolated
    assert "4 blocks per plan on generated inputs at n = 16777216 and n = 33554432" in case.how
    assert case.method == "extrapolated" and case.seconds >= case.floor_s
    assert e.tier in ("good", "excellent") and 0.7 < e.value <= 1.05


def test_one_atomic_per_block_on_a_million_blocks_is_bound_by_same_address_atomics():
    e = _estimate("reduce", ROOT / "lab" / "reduce_variants" / "shared_tree")
    (case,) = e.cases
    assert case.resource == "atomic" and case.bound.startswith("same-address atomics: 1,048,576")
    assert "atomicAdd" in (ROOT / "lab/reduce_variants/shared_tree/kernel.cu").read_text().splitlines()[
        int(case.lines[0][0].split(":")[1]) - 1]
    assert e.tier == "below target"


def test_the_report_ranks_the_three_reduce_designs_as_the_h200_did():
    times = {v: _estimate("reduce", ROOT / "lab" / "reduce_variants" / v).cases[0].seconds
             for v in ("float4_shuffle", "shared_tree", "atomic_per_element")}
    assert times["float4_shuffle"] < times["shared_tree"] < times["atomic_per_element"]


def test_a_sample_of_blocks_runs_only_those_blocks():
    src = r'''extern "C" __global__ void mark(int* out) { if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x + 1; }'''
    c = nvrtc.compile(src, "kernel.cu")
    emu = Emulator()
    mod = emu.load(c.ptx)
    out = emu.alloc(4 * 16)
    emu.memset(out, 0, 64)
    emu.launch(mod, "mark", grid=(16, 1, 1), block=(32, 1, 1), args=[out], blocks=[3, 7])
    got = emu.read(out, np.int32, 16)
    assert got[3] == 4 and got[7] == 8 and np.count_nonzero(got) == 2


def _records(blocks, sectors, store=None):
    n = len(sectors)
    return {"seq": np.arange(n), "pc": np.zeros(n, np.int32), "block": np.asarray(blocks, np.int64),
            "sector": np.asarray(sectors, np.int64), "store": np.zeros(n, bool) if store is None else np.asarray(store)}


def test_cache_model_reuses_within_a_block_and_across_blocks_of_a_wave():
    # block 0 reads sectors 0..3 twice (L1), block 1 reads the same sectors (L2, same wave)
    r = cache.simulate(_records([0] * 8 + [1] * 4, list(range(4)) * 3), concurrency=2, l2_sectors=100,
                       l1_sectors_per_block=100)
    assert (r.l1_hits, r.l2_hits, r.dram_read_sectors) == (4, 4, 4)


def test_cache_model_misses_again_when_the_l2_is_too_small_between_waves():
    blocks = [0] * 4 + [1] * 100 + [2] * 4  # one block per wave; wave 1 streams 100 other sectors
    sectors = list(range(4)) + list(range(1000, 1100)) + list(range(4))
    small = cache.simulate(_records(blocks, sectors), 1, l2_sectors=50, l1_sectors_per_block=1000)
    big = cache.simulate(_records(blocks, sectors), 1, l2_sectors=500, l1_sectors_per_block=1000)
    assert small.dram_read_sectors == 108 and big.dram_read_sectors == 104


def test_cache_model_misses_again_inside_one_wave_when_the_wave_touched_more_than_the_l2_between():
    # two resident blocks, one wave: each reads its 100-sector row, then reads the row again (the
    # L1 too small to keep it); between a block's two reads the wave touched 200 other sectors
    blocks = [0] * 100 + [1] * 100 + [0] * 100 + [1] * 100
    sectors = list(range(100)) + list(range(1000, 1100)) + list(range(100)) + list(range(1000, 1100))
    rec = _records(blocks, sectors)
    rec["seq"] = np.concatenate([np.arange(100), np.arange(100), 100 + np.arange(100), 100 + np.arange(100)])
    small = cache.simulate(rec, concurrency=2, l2_sectors=64, l1_sectors_per_block=0)
    big = cache.simulate(rec, concurrency=2, l2_sectors=1000, l1_sectors_per_block=0)
    assert small.dram_read_sectors == 400 and big.dram_read_sectors == 200 and big.l2_hits == 200


def test_a_warp_that_reads_its_row_twice_reads_it_from_dram_twice_when_the_resident_rows_outgrow_the_l2():
    # rmsnorm, a warp per row: at the bench shape 8,448 resident rows of 32-64 KB (x and r) are read
    # between a row's two reads; the H200 took 0.468 and 0.938 ms, 1.9x its compulsory bytes' time
    est = _estimate("rmsnorm", ROOT / "lab" / "validation" / "rmsnorm" / "warp_per_row")
    for c in est.cases:
        assert c.dram_bytes > 1.2 * c.compulsory_bytes, (c.case, c.dram_bytes / c.compulsory_bytes)


def test_loads_in_flight_counts_unrolled_independent_loads_as_one_round_trip():
    src = r'''extern "C" __global__ void k(const float* __restrict__ x, float* y, const int* __restrict__ idx) {
        int i = threadIdx.x;
        float a = x[i], b = x[i + 32], c = x[i + 64], d = x[i + 96];
        y[i] = a + b + c + d + x[idx[i]];
    }'''
    c = nvrtc.compile(src, "kernel.cu")
    from harness.emulator.ptx import load_ptx

    m = load_ptx(c.ptx)
    got = sorted((d, n) for space, d, n, _ in static.load_batches(m.code, list(m.functions.values())).values())
    assert got.count((1, 5)) == 5 and got == [(1, 5)] * 5 + [(2, 1)]  # x[idx[i]] waits for idx[i]


@pytest.mark.parametrize("opcode,expected", [("fma.rn.f32", "fp32"), ("add.s32", "int"), ("ex2.approx.ftz.f32", "sfu"),
                                             ("ld.global.nc.v4.f32", "lsu"), ("shfl.sync.down.b32", "shuffle"),
                                             ("fma.rn.f64", "fp64"), ("mov.u32", "other")])
def test_pipes(opcode, expected):
    assert static.pipe(opcode) == expected


ONE_WARP = r'''extern "C" __global__ void reduce(const float* __restrict__ x, float* out, int n)
{   // one warp walks the whole input: 2^23 iterations per lane at the bench shape
    float v = 0.0f;
    for (int i = threadIdx.x; i < n; i += 32) v += x[i];
    atomicAdd(out, v);
}'''
ONE_WARP_PLAN = ("def launch(gpu, x, out, n):\n    gpu.memset(out, 0)\n"
                 "    gpu.launch('reduce', grid=1, block=32, args=(x, out, n))\n")


def _one_warp(tmp_path):
    (tmp_path / "kernel.cu").write_text(ONE_WARP)
    (tmp_path / "launch.py").write_text(ONE_WARP_PLAN)
    return tmp_path


def test_a_model_run_that_cannot_finish_in_its_budget_gets_at_least_a_time_and_no_score_or_tier(tmp_path, monkeypatch):
    from grader.performance.model import observe

    monkeypatch.setattr(observe, "OBSERVE_STEPS", 4_000_000)  # ~2000 issues of work
    monkeypatch.setattr(observe, "RUN_STEPS", 2_000_000)
    e = _estimate("reduce", _one_warp(tmp_path))
    (case,) = e.cases
    assert case.method == "incomplete" and case.score is None and e.value is None and e.tier == ""
    assert "the estimate is a lower bound" in case.how and case.seconds >= case.floor_s > 0
    assert e.headline().startswith("estimated at least ") and "no score, no tier" in e.headline()
    assert "%" not in e.headline()


def test_one_warp_walking_the_whole_input_is_timed_by_its_serial_chain_not_spread_over_132_sms(tmp_path):
    """A single warp's 2^23 dependent iterations: extrapolated by the loop's trip count from shapes
    that fit the budget; one SM busy, so its latency chain is the time (about a second, not the
    61 us the 1 GB would take at full bandwidth)."""
    e = _estimate("reduce", _one_warp(tmp_path))
    (case,) = e.cases
    assert case.method == "extrapolated" and case.resource == "latency" and e.tier == "below target"
    # 8M dependent loads of 128 B per warp, a few in flight: about a second, never 61 us
    assert case.seconds > 100 * case.floor_s and 0.05 < case.seconds < 5.0


def test_the_model_budget_is_counted_in_emulated_work_so_a_slow_clock_changes_nothing(tmp_path, monkeypatch):
    """The same kernel estimated with the machine's clock running 1000x fast (as if every check of
    it came after a long stall) gets the same estimate to the last digit."""
    import itertools

    from harness.emulator import engine

    first = _estimate("reduce", _one_warp(tmp_path))
    ticks = itertools.count()
    monkeypatch.setattr(engine.time, "monotonic", lambda: next(ticks) * 1000.0)
    second = _estimate("reduce", _one_warp(tmp_path))
    assert [c.seconds for c in first.cases] == [c.seconds for c in second.cases]
    assert first.headline() == second.headline()


def test_a_kata_without_calibration_data_is_estimated_from_its_bench_shape(monkeypatch):
    from grader.performance.model import h200

    real = h200.library()
    monkeypatch.setattr(h200, "library", lambda: {**real, "katas": {k: v for k, v in real["katas"].items()
                                                                   if k not in ("reduce", "matmul")}})
    e = _estimate("reduce", ROOT / "solutions" / "reduce")  # roofline metric: scored from the cost model
    assert e.tier in ("good", "excellent") and e.cases[0].bound.startswith("DRAM") and e.library_value is None
    e = _estimate("matmul", ROOT / "lab" / "model" / "matmul" / "s3b_shared_tiles_16")  # library metric, no time
    assert e.tier == "unscored" and "no library time recorded" in e.headline() and e.metric == "roofline"


def test_profile_counts_a_warp_request_as_one_l1_wavefront_per_128_byte_line():
    from types import SimpleNamespace

    from harness.emulator.profile import Profile

    p = Profile()
    p.on_kernel_start("k", (1, 1, 1), (32, 1, 1), 0)
    base = 1 << 40
    coalesced, strided = SimpleNamespace(pc=0, opcode="ld.global.f32", file="k.cu", line=1), \
        SimpleNamespace(pc=1, opcode="ld.global.f32", file="k.cu", line=2)
    lanes = np.arange(32)
    p.on_memory(coalesced, "global", "ld", np.zeros(32, np.int64), lanes, (base + 4 * lanes).astype(np.uint64), 4)
    p.on_memory(strided, "global", "ld", np.zeros(32, np.int64), lanes, (base + 4096 * lanes).astype(np.uint64), 4)
    p.on_kernel_end()
    assert p.launches[0]["lines"] == {0: 1, 1: 32}


def test_every_model_run_shares_one_budget_of_emulated_work(monkeypatch):
    """top-p's two bench cases: every run's budget comes from one count of emulated work for
    the kata, and what they spent stays within it (and the half again the pair below may take)."""
    from grader.performance.model import observe

    real, spent = observe.model_run, []

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        spent.append(result[4])
        return result

    monkeypatch.setattr(observe, "model_run", spy)
    e = _estimate("top-p", ROOT / "solutions" / "top-p")
    assert len(e.cases) == 2 and e.value is not None and 0 < sum(spent) <= 1.5 * observe.OBSERVE_STEPS


def test_dev_check_grades_skip_the_estimate_and_still_pass(tmp_path, monkeypatch):
    """`kata dev check` audits verdicts: its solution grades ask for no H200 estimate (1-3 s each)."""
    from grader import pipeline
    from grader.performance.model import stage

    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    monkeypatch.setattr(stage, "estimate_stage", lambda *a, **k: pytest.fail("estimated"))
    r = pipeline.grade("reduce", ROOT / "solutions" / "reduce", backend="cpu", examples=0, with_estimate=False)
    assert r.verdict == "pass" and r.estimate is None and r.headline.startswith("passed")
    assert not any("estimate" in n for n in r.notes)


def test_the_launch_advice_names_the_fitted_cost_and_the_lever_there_is():
    """One launch cannot become fewer: the advice says what it costs and that only fusing helps;
    several launches are told their count and each one's cost (the fitted constant, not a guess)."""
    from grader.performance.model.terms import Context, term

    def advice(n, launch_s):
        return term("launch").advice(Context(launches=[None] * n, utilisation=1.0, compulsory_bytes=0.0,
                                             dram_bytes=0.0, launch_s=launch_s))

    one = advice(1, 7.5e-6)
    assert "one launch already; launching it and filling the GPU cost ~7.5 us" in one and "fewer, larger" not in one
    assert advice(3, 6e-6) == "fewer, larger launches: 3 launches each pay ~2.0 us"


def test_work_that_grows_along_the_grid_is_averaged_over_it():
    """Causal attention with a warp per query: the first blocks of a sample hold the first queries,
    which attend to a few keys; the H200 took 81 ms, the first blocks alone said 2.1 ms (spread.py)."""
    e = _estimate("attention", ROOT / "lab" / "validation" / "attention" / "warp_per_query")
    full, causal = (c.seconds for c in e.cases)
    assert 0.3 * full < causal < 0.7 * full, (full, causal)  # about half the keys, not 1/50th


def test_the_spread_probe_leaves_an_even_grid_and_a_tiled_causal_kernel_alone():
    """The twin: the attention solution's query tiles skip masked key tiles; its causal case is
    still the faster one (3.98 ms before the probe, 5.48 ms on the H200)."""
    e = _estimate("attention", ROOT / "solutions" / "attention")
    full, causal = (c.seconds for c in e.cases)
    assert causal < 0.5 * full and 2.5e-3 < causal < 6e-3, (full, causal)


def test_spread_ratios_use_the_midpoint_rule_and_ignore_cut_probes():
    from grader.performance.model import spread
    from grader.performance.model.summarise import _FIELDS

    i = _FIELDS.index("instructions")

    def launch(work_per_block, blocks, grid=(64, 1, 1)):
        row = [0.0] * len(_FIELDS)
        row[i] = work_per_block * len(blocks)
        return {"kernel": "k", "grid": grid, "blocks_run": np.asarray(blocks), "rows": {0: row}}

    sample = launch(2.0, range(4))  # blocks 0-3 of a triangle: block b does b + 0.5 units
    q1, q3 = launch(16.5, [16]), launch(47.5, [47])
    (r,) = spread.ratios([sample], [[q1], [q3]])
    assert r == pytest.approx(32.0 / 2.0)  # the grid's mean over the first blocks'
    assert spread.ratios([sample], [[q1], None]) == [1.0]  # a probe cut by its budget: no change
    assert spread.ratios([launch(2.0, range(64))], [[q1], [q3]]) == [1.0]  # the sample was the grid
    assert spread.diagonal_block(0.75, (64, 8, 1)).tolist() == [47 + 64 * 5]

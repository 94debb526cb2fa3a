"""Named barriers with a thread count: bar.sync id, n (every waiter waits) and bar.arrive id, n (the
producer's half: it counts and goes on), as FlashAttention-3's warpgroup ping-pong and a producer
warp handing shared memory to consumer warps use them."""
from __future__ import annotations

import numpy as np

from harness.emulator import Emulator
from harness.frontends.nvrtc import compile

# Warp 0 fills a shared buffer and arrives at barrier 1; warps 1-2 wait there (96 threads in all)
# and read it. Warp 3 takes no part: it waits at barrier 2 for nobody but itself.
HAND_OFF = r'''
extern "C" __global__ void k(const float* x, float* out) {
    __shared__ float buf[64];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (warp == 0) {
        buf[lane] = x[lane] * 2.0f;
        buf[lane + 32] = x[lane + 32] * 2.0f;
        {HANDOFF}
    } else if (warp < 3) {
        asm volatile("bar.sync 1, 96;" ::: "memory");
        out[threadIdx.x - 32] = buf[threadIdx.x - 32] + 1.0f; // expect: race-raw
    } else {
        asm volatile("bar.sync 2, 32;" ::: "memory");
        out[64 + lane] = 7.0f;
    }
}
'''
ARRIVE = 'asm volatile("bar.arrive 1, 96;" ::: "memory");'


def _run(src):
    r = compile(src, "kernel.cu")
    assert r.ok, r.log
    emu = Emulator(sanitize=True, counters=False, wall_clock_s=60)
    mod = emu.load(r.ptx, "kernel.cu")
    x = np.arange(64, dtype=np.float32)
    px, out = emu.alloc(x.nbytes), emu.alloc(96 * 4)
    emu.write(px, x)
    emu.memset(out, 0, 96 * 4)
    res = emu.launch(mod, "k", grid=(1, 1, 1), block=(128, 1, 1), args=[px, out])
    return res, emu.read(out, np.float32, 96)


def test_an_arrive_releases_the_waiters_once_the_count_is_reached_and_orders_the_hand_off():
    res, out = _run(HAND_OFF.replace("{HANDOFF}", ARRIVE))
    assert [f.kind for f in res.findings] == [], [(f.kind, f.line, f.message) for f in res.findings]
    assert np.array_equal(out[:64], np.arange(64, dtype=np.float32) * 2 + 1) and (out[64:] == 7).all()


def _line(src, needle):
    return next(i for i, t in enumerate(src.splitlines(), 1) if needle in t)


def test_without_the_arrive_the_waiters_never_complete_and_that_is_reported():
    src = HAND_OFF.replace("{HANDOFF}", "")
    res, _ = _run(src)
    assert res.stopped
    assert ("deadlock", _line(src, "bar.sync 1, 96")) in [(f.kind, f.line) for f in res.findings]


def test_an_arrive_before_the_writes_is_a_race_on_the_buffer():
    # the producer arrives first and writes after: the consumers may read before the writes land
    writes = "        buf[lane] = x[lane] * 2.0f;\n        buf[lane + 32] = x[lane + 32] * 2.0f;\n"
    src = HAND_OFF.replace(writes + "        {HANDOFF}", "        " + ARRIVE + "\n" + writes)
    res, _ = _run(src)
    race = [f for f in res.findings if f.kind == "race-raw"]
    assert race and race[0].line == _line(src, "// expect: race-raw"), [(f.kind, f.line) for f in res.findings]
    assert "thread (32,0,0)" in race[0].message and f"thread (0,0,0) wrote at kernel.cu:{_line(src, 'buf[lane] =')}" \
        in race[0].message

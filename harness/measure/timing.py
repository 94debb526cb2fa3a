"""Every rule about measuring a kernel's time lives here (docs/roofline.md, "Timing method").

1. CUDA events on the kernel's stream around the launch plan only; warm-up of >= 3 calls and
   >= 25 ms first, so module load, JIT and allocator growth stay out of the numbers.
2. A >= 256 MB read before every sample flushes the 60 MB L2 and leaves it holding clean lines;
   without a flush inputs that fit in L2 run "faster than HBM". A read, not a write: a memset
   leaves the L2 full of dirty lines, and the timed kernel's first ~60 MB of misses then also
   write those back, charging a memory-bound kernel for traffic that is not its own (L2Flush).
   The flush is enqueued before the start event without a host sync, so the Python overhead of
   issuing the plan hides behind it instead of being timed as idle GPU.
3. Stop on noise: >= 10 samples and >= 0.3 s, then when the relative standard error of the mean
   is <= 0.5 %, capped by a sample count and a wall-clock budget.
4. The SM clock is read after every sample (NVML); samples far below the GPU's maximum clock
   are dropped when enough remain, and a low clock is flagged either way.
5. A host timer around each sample (ended by a device-wide sync) cross-checks the events: work
   the events cannot see (another stream) shows up as host time the events lack.
6. Python's cyclic garbage collector is off while a measurement runs (as in timeit): a full
   collection of a large heap (torch's, imported by the grade's prefetch) inside the issue of a
   multi-launch plan is GPU idle time in that one sample, an outlier the noise rule then waits out.
The statistics and the stopping rule are pure functions, tested on the CPU; `measure` needs CuPy.
"""
from __future__ import annotations

import gc
import math
import time
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class TimingPolicy:
    warmup_calls: int = 3  # at least this many untimed calls
    warmup_s: float = 0.025  # and at least this long
    min_samples: int = 10
    min_seconds: float = 0.3  # wall time spent sampling before the noise rule may stop (was 0.5 s: latency)
    target_rse: float = 0.005  # relative standard error of the mean to stop at
    max_samples: int = 2000
    max_seconds: float = 3.0  # the cap: a noisy GPU stops here and says so
    # L2 flush read before every sample: >= 256 MB evicts the 60 MB L2. 1 GiB (~0.25 ms on an
    # H200) also gives the host that long to issue the plan while the GPU is busy: on the H200 a
    # one-launch plan took ~0.12 ms of Python to issue, as long as a 512 MB flush.
    flush_bytes: int = 1 << 30
    flush_mode: str = "read"  # L2Flush.MODES; "write" only to compare with the old method
    low_clock: float = 0.85  # a sample whose SM clock is below this fraction of the max is "low"


#: quick settings for tests and the calibration's health check
QUICK = TimingPolicy(warmup_calls=2, warmup_s=0.005, min_samples=5, min_seconds=0.05, max_seconds=0.5)


@dataclass(frozen=True)
class Stats:
    n: int  # samples
    median: float  # seconds; the score uses this
    mean: float
    std: float  # sample standard deviation (ddof=1)
    min: float
    p90: float
    rse: float  # std / (mean * sqrt(n)): relative standard error of the mean

    def describe(self) -> str:
        return (f"median {fmt_time(self.median)} (mean {fmt_time(self.mean)}, std {self.std / self.mean:.1%}"
                f" of mean, min {fmt_time(self.min)}, p90 {fmt_time(self.p90)}, n={self.n})"
                if self.mean > 0 else f"n={self.n}")


def stats(samples) -> Stats:
    """Summary statistics of timing samples in seconds."""
    a = np.asarray(list(samples), dtype=np.float64)
    if a.size == 0:
        return Stats(0, 0.0, 0.0, 0.0, 0.0, 0.0, math.inf)
    std = float(a.std(ddof=1)) if a.size > 1 else 0.0
    mean = float(a.mean())
    rse = std / (mean * math.sqrt(a.size)) if a.size > 1 and mean > 0 else math.inf
    return Stats(n=int(a.size), median=float(np.median(a)), mean=mean, std=std, min=float(a.min()),
                 p90=float(np.percentile(a, 90)), rse=rse)


def stop_reason(samples, elapsed_s: float, policy: TimingPolicy) -> str | None:
    """Why sampling should stop now, or None to keep going.

    "noise" (the normal case), "count" or "time" (caps: the result is noisier than the target)."""
    n = len(samples)
    if n >= policy.max_samples:
        return "count"
    if elapsed_s >= policy.max_seconds and n >= 2:
        return "time"
    if n < policy.min_samples or elapsed_s < policy.min_seconds:
        return None
    return "noise" if stats(samples).rse <= policy.target_rse else None


def keep_by_clock(samples, clocks, max_clock: float | None, policy: TimingPolicy):
    """(kept samples, number dropped): samples run at a clock far below the maximum are dropped,
    but only while at least `min_samples` remain (a GPU that is always slow is reported, not hidden)."""
    if not max_clock or not clocks or len(clocks) != len(samples):
        return list(samples), 0
    good = [s for s, c in zip(samples, clocks) if c is None or c >= policy.low_clock * max_clock]
    if len(good) < policy.min_samples:
        return list(samples), 0
    return good, len(samples) - len(good)


def host_excess_flag(host_spans, event_spans) -> str | None:
    """A flag when the host saw much more time than the events: work outside the timed stream."""
    if not host_spans or not event_spans:
        return None
    excess = float(np.median(np.asarray(host_spans) - np.asarray(event_spans)))
    ev = float(np.median(event_spans))
    if excess > 5e-4 + 0.5 * ev:
        return (f"the host waited {fmt_time(excess)} longer than the CUDA events measured: work ran "
                f"outside the timed stream, so the time is not trustworthy")
    return None


def fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} µs"


@dataclass(frozen=True)
class TimingResult:
    stats: Stats  # over the kept samples; stats.median is the score's time
    stop: str  # noise | count | time
    samples: tuple[float, ...]  # kept samples in seconds, in order
    dropped_low_clock: int  # samples dropped for a low SM clock
    sm_clock_mhz: float | None  # median SM clock during the samples (None without NVML)
    sm_clock_max_mhz: float | None  # the GPU's maximum SM clock
    host_overhead_s: float  # median host-timer span minus event span (flush included in both)
    issue_s: float  # median host time the plan took to issue its work (hidden behind the flush)
    wall_s: float  # warm-up plus sampling
    flags: tuple[str, ...] = field(default_factory=tuple)  # what makes this time less trustworthy


class ClockProbe:
    """The SM clock through NVML (nvidia-ml-py); silently absent where NVML is."""

    def __init__(self, device_index: int = 0):
        self.handle = None
        self.max_mhz: float | None = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            try:  # CUDA and NVML may number devices differently; the PCI bus id is shared
                import cupy

                self.handle = pynvml.nvmlDeviceGetHandleByPciBusId(cupy.cuda.runtime.deviceGetPCIBusId(device_index))
            except Exception:
                self.handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
            self.max_mhz = float(pynvml.nvmlDeviceGetMaxClockInfo(self.handle, pynvml.NVML_CLOCK_SM))
        except Exception:
            self.handle = None

    def sm_mhz(self) -> float | None:
        if self.handle is None:
            return None
        try:
            return float(self._nvml.nvmlDeviceGetClockInfo(self.handle, self._nvml.NVML_CLOCK_SM))
        except Exception:
            return None


_FLUSH_READ = r"""
extern "C" __global__ void l2_flush_read(const uint4* __restrict__ p, unsigned long long n, unsigned* sink)
{
    unsigned acc = 0;  // kept live, so no load is removed
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9E3779B9u) sink[0] = acc;  // never: the buffer is zeros
}
"""


class L2Flush:
    """Evicts the L2 before a sample: a read of `nbytes` (mode "read", the method) or a memset
    (mode "write", the method before 2026-12-02, kept to compare the two).

    Both evict every line the last sample left, writing back its dirty ones outside the timed
    region. Only the read leaves the L2 clean: after a memset the L2 is full of the memset's own
    dirty lines, and a kernel's misses must write those back before they can allocate, so the
    first ~L2-size of a timed kernel's reads cost a write each (lab/flush_probe.py measures it)."""

    MODES = ("read", "write")

    def __init__(self, nbytes: int, mode: str = "read"):
        import cupy

        if mode not in self.MODES:
            raise ValueError(f"L2Flush mode {mode!r}: one of {self.MODES}")
        self.mode = mode
        self.buf = cupy.zeros(max(16, int(nbytes) // 16 * 16), dtype=cupy.uint8)
        self.value = 0
        if mode == "read":
            self.kernel = cupy.RawKernel(_FLUSH_READ, "l2_flush_read")
            self.sink = cupy.zeros(1, dtype=cupy.uint32)
            self.blocks = 8 * cupy.cuda.Device().attributes["MultiProcessorCount"]

    def __call__(self, stream) -> None:
        import cupy
        import numpy as np

        if self.mode == "read":
            with stream:
                self.kernel((self.blocks,), (256,), (self.buf, np.uint64(self.buf.nbytes // 16), self.sink))
            return
        self.value = (self.value + 1) & 0xFF  # a changing value, so no layer can skip the write
        cupy.cuda.runtime.memsetAsync(self.buf.data.ptr, self.value, self.buf.nbytes, stream.ptr)


def measure(run, stream, *, policy: TimingPolicy = TimingPolicy(), before=None, flush: L2Flush | None = None,
            clock: ClockProbe | None = None) -> TimingResult:
    """Time `run()` (which enqueues work on `stream`) by CUDA events, per the module's method.

    `before()` runs before every call outside the timed region (restore in-out buffers)."""
    with gc_paused():
        return _measure(run, stream, policy=policy, before=before, flush=flush, clock=clock)


class gc_paused:
    """Python's cyclic garbage collector off for the block (restored as it was); see point 6."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()


def _measure(run, stream, *, policy: TimingPolicy, before, flush: L2Flush | None,
             clock: ClockProbe | None) -> TimingResult:
    import cupy

    flush = flush or L2Flush(policy.flush_bytes, policy.flush_mode)
    device = cupy.cuda.Device()
    t_start = time.perf_counter()
    calls = 0
    while calls < policy.warmup_calls or time.perf_counter() - t_start < policy.warmup_s:
        if before:
            before()
        flush(stream)
        run()
        stream.synchronize()
        calls += 1
    e0, e1, e2 = (cupy.cuda.Event() for _ in range(3))
    samples: list[float] = []
    clocks: list[float | None] = []
    host_spans: list[float] = []
    event_spans: list[float] = []
    issue_spans: list[float] = []  # host time to issue the plan
    flush_spans: list[float] = []  # GPU time of the flush, which the issuing should hide behind
    t_sampling = time.perf_counter()
    reason = None
    while reason is None:
        if before:
            before()
        stream.synchronize()
        h0 = time.perf_counter()
        e0.record(stream)
        flush(stream)
        e1.record(stream)
        i0 = time.perf_counter()
        run()
        issue_spans.append(time.perf_counter() - i0)
        e2.record(stream)
        device.synchronize()  # device-wide: the host timer sees every stream
        h1 = time.perf_counter()
        # Read right after the sample: the clock governor reacts over milliseconds, so this is the
        # clock the sample ran at, and the NVML call stays out of the host timer's span.
        clocks.append(clock.sm_mhz() if clock else None)
        samples.append(cupy.cuda.get_elapsed_time(e1, e2) / 1e3)
        event_spans.append(cupy.cuda.get_elapsed_time(e0, e2) / 1e3)
        flush_spans.append(cupy.cuda.get_elapsed_time(e0, e1) / 1e3)
        host_spans.append(h1 - h0)
        reason = stop_reason(samples, time.perf_counter() - t_sampling, policy)
    max_clock = clock.max_mhz if clock else None
    kept, dropped = keep_by_clock(samples, clocks, max_clock, policy)
    flags = []
    valid_clocks = [c for c in clocks if c is not None]
    med_clock = float(np.median(valid_clocks)) if valid_clocks else None
    if med_clock and max_clock and med_clock < policy.low_clock * max_clock:
        flags.append(f"the SM clock ran at {med_clock:.0f} MHz, below {policy.low_clock:.0%} of its "
                     f"{max_clock:.0f} MHz maximum: a throttled or shared GPU")
    if dropped:
        flags.append(f"{dropped} samples dropped for a low SM clock")
    if reason != "noise":
        flags.append(f"stopped by the {reason} cap at relative standard error {stats(kept).rse:.2%} "
                     f"(target {policy.target_rse:.1%}): the GPU is noisy")
    if f := host_excess_flag(host_spans, event_spans):
        flags.append(f)
    issue, flush_s = float(np.median(issue_spans)), float(np.median(flush_spans))
    if issue > flush_s and issue > 0.05 * stats(kept).median:
        flags.append(f"the launch plan takes {fmt_time(issue)} of host time to issue, longer than the "
                     f"{fmt_time(flush_s)} flush it hides behind: GPU idle time is part of this time")
    return TimingResult(stats=stats(kept), stop=reason, samples=tuple(kept), dropped_low_clock=dropped,
                        sm_clock_mhz=med_clock, sm_clock_max_mhz=max_clock,
                        host_overhead_s=float(np.median(np.subtract(host_spans, event_spans))),
                        issue_s=issue,
                        wall_s=time.perf_counter() - t_start, flags=tuple(flags))

"""Ceilings are measured, not typed in: copy and read bandwidth, fp32 and bf16 peak rates.

`kata calibrate` measures them once per GPU name and driver and caches them; every later grade
loads the cache (calibrating on first use) and runs a 0.1-second copy to check that the GPU is
still within 5 % of its calibration: a shared, throttled or sick GPU is reported, never scored
silently against ceilings it no longer reaches.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.measure import timing

#: a grade whose quick copy is this much below the calibrated bandwidth says so
HEALTH_TOLERANCE = 0.05

_PROBES = r"""
extern "C" __global__ void read_probe(const float4* __restrict__ x, float* out, long long n4)
{
    // Reads every float4 once and keeps the sum live so the loads are not removed.
    float s = 0.0f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
         i += (long long)gridDim.x * blockDim.x) {
        const float4 v = x[i];
        s += (v.x + v.y) + (v.z + v.w);
    }
    if (s == 1.2345e-30f) out[0] = s;  // practically never true; the compiler cannot know
}

extern "C" __global__ void fma_probe(float* out, int iters, float a, float b)
{
    // Eight independent FMA chains per thread keep every FP32 pipe busy despite FMA latency.
    float x0 = threadIdx.x, x1 = x0 + 1.f, x2 = x0 + 2.f, x3 = x0 + 3.f;
    float x4 = x0 + 4.f, x5 = x0 + 5.f, x6 = x0 + 6.f, x7 = x0 + 7.f;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
            x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
        }
    }
    const float s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
    if (s == 1.2345e-30f) out[0] = s;
}

extern "C" __global__ void empty_probe(float* out)
{
    if (out == nullptr) out[0] = 0.0f;  // never: a launch that does nothing, timed like a kernel
}
"""
#: the ceilings' timing: each probe warms up for 0.3 s first, since an idle H200 sits at 345 MHz and
#: its clocks take tens of milliseconds to rise, then samples for at least 0.2 s. With QUICK's 5 ms
#: warm-up, calibrations on fresh H200 machines read 4.33, 4.52 and 4.63 TB/s; with this one, three
#: on one machine read 4.62 each and another machine 4.53 (lab/results/2026-12-01-h200-wave4.md)
CALIBRATION = timing.TimingPolicy(warmup_calls=3, warmup_s=0.3, min_samples=10, min_seconds=0.2, max_seconds=1.0)
#: the flush the ceilings are timed after: a cache timed after another one is measured again
FLUSH = timing.TimingPolicy().flush_mode
_FMA_PER_ITER = 16 * 8  # FMAs per thread per outer iteration of fma_probe


@dataclass(frozen=True)
class Ceilings:
    bandwidth: float  # bytes/s, the practical copy bandwidth B (read + write)
    fp32: float  # FLOP/s, CUDA-core fp32 peak
    bf16: float | None = None  # FLOP/s, tensor-core bf16 peak (None when not measured)
    # seconds an empty kernel takes under the timing method (event-timed, after the L2 flush): no
    # kernel is faster, so the roofline time of a case is max(bytes / B, FLOPs / P) + launch_s
    launch_s: float = 0.0

    def peak(self, precision: str = "fp32") -> float:
        """P for a kata's precision: the measured fp32 FMA peak, or a tensor-core type's dense peak:
        the datasheet's, or more where cuBLAS was measured faster (bf16 scaled to the others)."""
        if precision == "fp32":
            return self.fp32
        from harness.hardware import TENSOR_PEAK

        measured = (self.bf16 or 0.0) * TENSOR_PEAK[precision] / TENSOR_PEAK["bf16"]
        return max(TENSOR_PEAK[precision], measured)


@dataclass(frozen=True)
class Calibration:
    gpu: str  # device name as CUDA reports it
    driver: int  # CUDA driver version (e.g. 13000)
    copy_bandwidth: float  # bytes/s, device-to-device copy, bytes read + bytes written
    read_bandwidth: float  # bytes/s, a float4 streaming read
    fp32: float  # FLOP/s, CUDA-core FMA peak as measured
    bf16: float | None  # FLOP/s, cuBLAS bf16 matmul through torch (None without torch)
    sm_clock_max_mhz: float | None  # NVML's maximum SM clock at calibration
    measured_at: str  # ISO date and time
    launch_s: float | None = None  # s, an empty kernel under the timing method (None: a cache older than it)
    flush: str | None = None  # the L2 flush the ceilings were timed after (timing.L2Flush; None: "write")

    @property
    def bandwidth(self) -> float:
        """B of docs/roofline.md: the highest rate the memory was seen to sustain (copy or read)."""
        return max(self.copy_bandwidth, self.read_bandwidth)

    def ceilings(self) -> Ceilings:
        return Ceilings(bandwidth=self.bandwidth, fp32=self.fp32, bf16=self.bf16, launch_s=self.launch_s or 0.0)

    def describe(self) -> str:
        bf16 = f"{self.bf16 / 1e12:.0f} TFLOP/s" if self.bf16 else "not measured (no torch)"
        return (f"{self.gpu} (driver {self.driver}): copy {self.copy_bandwidth / 1e12:.2f} TB/s, "
                f"read {self.read_bandwidth / 1e12:.2f} TB/s, fp32 {self.fp32 / 1e12:.1f} TFLOP/s, "
                f"bf16 {bf16}, empty launch {(self.launch_s or 0) * 1e6:.1f} us; measured {self.measured_at}")


def cache_path() -> Path:
    home = os.environ.get("KATA_HOME")
    if home:
        return Path(home) / "calibration.json"
    try:
        from platformdirs import user_data_dir  # absent on some GPU images: only needed here
    except ImportError:
        return Path.home() / ".kata" / "calibration.json"
    return Path(user_data_dir("kata")) / "calibration.json"


def _key(gpu: str, driver: int) -> str:
    return f"{gpu} | driver {driver}"


def load_cached(gpu: str, driver: int, path: Path | None = None) -> Calibration | None:
    path = path or cache_path()
    try:
        data = json.loads(path.read_text()).get(_key(gpu, driver))
        cal = Calibration(**data) if data else None
        # older caches lack the launch floor, or were timed after the old (write) flush
        return cal if cal is not None and cal.launch_s and cal.flush == FLUSH else None
    except (OSError, ValueError, TypeError):
        return None


def save(cal: Calibration, path: Path | None = None) -> Path:
    path = path or cache_path()
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    data[_key(cal.gpu, cal.driver)] = asdict(cal)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)  # atomic: a concurrent grade never reads half a file
    return path


def _probes(backend):
    from harness.frontends.nvrtc import compile as nvrtc_compile

    res = nvrtc_compile(_PROBES, "calibrate.cu", cubin=True)
    if not res.ok:
        raise RuntimeError(f"the calibration kernels did not compile: {res.log}")
    backend.load(res.ptx, res.cubin, "calibrate.cu")


def measure_copy(backend, nbytes: int = 2 << 30, policy: timing.TimingPolicy = CALIBRATION) -> float:
    """Device-to-device copy bandwidth in bytes/s (bytes read + bytes written)."""
    import numpy as np

    src, dst = backend.alloc(nbytes // 4, np.float32), backend.alloc(nbytes // 4, np.float32)
    backend.memset(src, 0x3F)
    r = timing.measure(lambda: backend.copy(dst, src), backend.stream, policy=policy)
    return 2 * src.nbytes / r.stats.median


def measure_read(backend, nbytes: int = 2 << 30, policy: timing.TimingPolicy = CALIBRATION) -> float:
    import numpy as np

    x, out = backend.alloc(nbytes // 4, np.float32), backend.alloc(1, np.float32)
    backend.memset(x, 0x3F)
    blocks = backend.facts.sm_count * 8
    args = [x, out, np.int64(x.size // 4)]
    r = timing.measure(lambda: backend.launch("read_probe", (blocks, 1, 1), (256, 1, 1), 0, args),
                       backend.stream, policy=policy)
    return x.nbytes / r.stats.median


def measure_launch(backend, policy: timing.TimingPolicy = CALIBRATION) -> float:
    """Seconds an empty kernel takes under the timing method (its events around the launch only)."""
    import numpy as np

    out = backend.alloc(1, np.float32)
    r = timing.measure(lambda: backend.launch("empty_probe", (1, 1, 1), (32, 1, 1), 0, [out]),
                       backend.stream, policy=policy)
    return float(r.stats.median)


def measure_fp32(backend, policy: timing.TimingPolicy = CALIBRATION) -> float:
    import numpy as np

    out = backend.alloc(1, np.float32)
    blocks, threads, iters = backend.facts.sm_count * 8, 256, 2048
    args = [out, np.int32(iters), np.float32(0.999999), np.float32(1e-7)]
    r = timing.measure(lambda: backend.launch("fma_probe", (blocks, 1, 1), (threads, 1, 1), 0, args),
                       backend.stream, policy=policy)
    return 2.0 * _FMA_PER_ITER * iters * blocks * threads / r.stats.median


def measure_bf16(backend, n: int = 8192, policy: timing.TimingPolicy = CALIBRATION) -> float | None:
    """cuBLAS bf16 matmul rate through torch on random data (never zeros); None without torch."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    stream = backend.external_stream(torch.cuda.current_stream().cuda_stream)
    r = timing.measure(lambda: torch.matmul(a, b, out=c), stream, policy=policy)
    return 2.0 * n ** 3 / r.stats.median


def calibrate(backend) -> Calibration:
    """Measure every ceiling on `backend` (a harness.backends.gpu.GpuBackend); a few seconds."""
    _probes(backend)
    clock = timing.ClockProbe()
    return Calibration(gpu=backend.facts.name, driver=int(backend.driver_version),
                       copy_bandwidth=measure_copy(backend), read_bandwidth=measure_read(backend),
                       fp32=measure_fp32(backend), bf16=measure_bf16(backend),
                       sm_clock_max_mhz=clock.max_mhz, launch_s=measure_launch(backend), flush=FLUSH,
                       measured_at=_dt.datetime.now().isoformat(timespec="seconds"))


def load_or_calibrate(backend, *, path: Path | None = None) -> tuple[Calibration, bool]:
    """(calibration, True when it was measured just now). Loading a new module is the caller's
    next step: calibrating replaces the backend's module with the probes."""
    cal = load_cached(backend.facts.name, int(backend.driver_version), path)
    if cal is not None:
        return cal, False
    cal = calibrate(backend)
    try:
        save(cal, path)
    except OSError:
        pass  # an unwritable cache costs a calibration per grade, not a wrong score
    return cal, True


def health_check(backend, cal: Calibration, nbytes: int = 1 << 30) -> tuple[float, str | None]:
    """(copy bandwidth now, a warning when it is more than 5 % away from the calibration).

    Both ways: below, the GPU is shared or throttled and scores read low; above, the calibration
    no longer describes this GPU (a stale or edited calibration.json would make every score read
    high), and the caller measures the ceilings afresh (`trusted`)."""
    policy = timing.TimingPolicy(warmup_calls=2, warmup_s=0.005, min_samples=5, min_seconds=0.03,
                                 max_seconds=0.15)
    now = measure_copy(backend, nbytes, policy)
    if now < (1 - HEALTH_TOLERANCE) * cal.copy_bandwidth:
        return now, (f"the GPU copies at {now / 1e12:.2f} TB/s, {1 - now / cal.copy_bandwidth:.0%} below its "
                     f"calibration ({cal.copy_bandwidth / 1e12:.2f} TB/s): it is shared, throttled or "
                     f"unwell, so these scores read low; rerun later or `kata calibrate` again")
    if now > (1 + HEALTH_TOLERANCE) * cal.copy_bandwidth:
        return now, (f"the GPU copies at {now / 1e12:.2f} TB/s, {now / cal.copy_bandwidth - 1:.0%} above its "
                     f"calibration ({cal.copy_bandwidth / 1e12:.2f} TB/s): the calibration does not describe "
                     "this GPU, so it was measured again for this grade")
    return now, None


def trusted(backend, cal: Calibration) -> tuple[Calibration, str | None]:
    """The calibration to score with after the quick probe both ways: `cal`, or (when the GPU is
    faster than `cal` says, which only a wrong calibration explains) a fresh one."""
    now, note = health_check(backend, cal)
    if note is not None and now > cal.copy_bandwidth:
        return calibrate(backend), note
    return cal, note

"""The GPU backend: the launch plan's calls on a real device through CuPy.

The module is the sm_90 cubin NVRTC produced (harness.frontends.nvrtc.compile(..., cubin=True)), loaded
with cupy.RawModule: a cubin from a newer NVRTC loads on an older driver, PTX would not. Every
operation runs on one non-blocking stream of the backend's own, the stream timing.measure puts its
CUDA events on. Kernel parameter types come from the PTX `.entry` so numbers reach the kernel with
the width and signedness it declared.
"""
from __future__ import annotations

import os
import re
import tempfile

import numpy as np

from harness.backends.base import H200, Backend, Buffer, DeviceFacts, KernelParam


class GpuUnavailable(RuntimeError):
    """No usable CUDA GPU or no CuPy: a setup problem, not the learner's (exit code 3)."""


_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)", re.S)
_PARAM_TYPES = {"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "f32", "f64", "b8", "b16", "b32",
                "b64", "pred"}
_NUMPY = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "s8": np.int8, "s16": np.int16,
          "s32": np.int32, "s64": np.int64, "f16": np.float16, "f32": np.float32, "f64": np.float64,
          "b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64}


def parse_entries(ptx: str) -> dict[str, list[KernelParam]]:
    """{entry name: [KernelParam ...]} from PTX text (`.param .u64 .ptr .global .align 4 name`)."""
    out: dict[str, list[KernelParam]] = {}
    for m in _ENTRY.finditer(ptx):
        params = []
        for decl in (d.strip() for d in m[2].split(",")):
            if not decl:
                continue
            words = decl.replace("\t", " ").split()
            types = [w[1:] for w in words if w.startswith(".") and w[1:] in _PARAM_TYPES]
            name = re.sub(r"\[\d*\]$", "", words[-1])
            params.append(KernelParam(name, types[0] if types else "b8"))
        out[m[1]] = params
    return out


def base_name(entry: str) -> str:
    """`_Z6reducePKfPfi` -> `reduce`, so a kernel without extern "C" is still found by its name."""
    m = re.match(r"_Z(?:N\d*)?(\d+)", entry)
    if not m:
        return entry
    n = int(m[1])
    return entry[m.end():m.end() + n]


def resolve(entries, name: str) -> str | None:
    if name in entries:
        return name
    matches = [e for e in entries if base_name(e) == name]
    return matches[0] if len(matches) == 1 else None


def _import_cupy():
    try:
        import cupy
    except ImportError as exc:
        raise GpuUnavailable("CuPy is not installed: `pip install cupy-cuda13x` (or `pip install -e '.[gpu]'` "
                             "in your kata checkout, with torch for the library baselines), "
                             "or grade with --backend cpu") from exc
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise GpuUnavailable("CuPy sees no CUDA device: grade with --backend cpu")
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        raise GpuUnavailable(f"CUDA is not usable ({exc}): check the driver, or grade with --backend cpu") from exc
    return cupy


def facts_of(props: dict) -> DeviceFacts:
    """DeviceFacts from cupy.cuda.runtime.getDeviceProperties(); H200 values where a key is absent."""
    name = props.get("name", H200.name)
    name = name.decode() if isinstance(name, bytes) else str(name)
    g = lambda key, default: int(props.get(key, default) or default)  # noqa: E731
    return DeviceFacts(name=name, sm_count=g("multiProcessorCount", H200.sm_count),
                       max_threads_per_block=g("maxThreadsPerBlock", 1024),
                       max_shared_per_block=g("sharedMemPerBlock", H200.max_shared_per_block),
                       max_shared_per_block_optin=g("sharedMemPerBlockOptin", H200.max_shared_per_block_optin),
                       shared_per_sm=g("sharedMemPerMultiprocessor", H200.shared_per_sm),
                       warp_size=g("warpSize", 32), l2_bytes=g("l2CacheSize", H200.l2_bytes),
                       max_threads_per_sm=g("maxThreadsPerMultiProcessor", 2048),
                       max_blocks_per_sm=g("maxBlocksPerMultiProcessor", 32),
                       registers_per_sm=g("regsPerMultiprocessor", 65536))


_DIFFERING = None


def _differing_words(cupy):
    """A reduction kernel counting the positions where two arrays of one unsigned type differ."""
    global _DIFFERING
    if _DIFFERING is None:
        _DIFFERING = cupy.ReductionKernel("T x, T y", "uint64 n", "x != y ? 1 : 0", "a + b", "n = a", "0",
                                          "kata_differing_words")
    return _DIFFERING


def available() -> bool:
    """True when CuPy imports and sees a CUDA device (never raises)."""
    try:
        _import_cupy()
        return True
    except Exception:
        return False


class GpuBackend(Backend):
    name = "gpu"

    def __init__(self, device: int = 0):
        self.cupy = cupy = _import_cupy()
        self.device = cupy.cuda.Device(device)
        self.device.use()
        self.facts = facts_of(cupy.cuda.runtime.getDeviceProperties(device))
        self.driver_version = cupy.cuda.runtime.driverGetVersion()
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.module = None
        self.entries: dict[str, list[KernelParam]] = {}
        # distinct (kernel, block threads, dynamic shared) issued, in order: the occupancy report's rows
        self.launches: dict[tuple[str, int, int], None] = {}
        self._functions: dict[str, object] = {}
        self._tmpdir = tempfile.TemporaryDirectory(prefix="kata-gpu-")

    # -- module -------------------------------------------------------------------------------
    def load(self, ptx: str, cubin: bytes | None, filename: str) -> None:
        self.entries = parse_entries(ptx or "")
        self._functions.clear()
        if cubin is not None:
            path = os.path.join(self._tmpdir.name, f"module{len(os.listdir(self._tmpdir.name))}.cubin")
            with open(path, "wb") as f:
                f.write(cubin)
            self.module = self.cupy.RawModule(path=path)
        else:  # PTX loads only when this NVRTC is no newer than the driver
            self.module = self._load_ptx(ptx)

    def _load_ptx(self, ptx: str):
        path = os.path.join(self._tmpdir.name, f"module{len(os.listdir(self._tmpdir.name))}.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        return self.cupy.RawModule(path=path)

    def kernel_params(self, name: str) -> list[KernelParam] | None:
        entry = resolve(self.entries, name)
        return None if entry is None else list(self.entries[entry])

    def kernel_names(self) -> list[str]:
        """The module's kernels by the names a launch plan uses (mangled entries by base name)."""
        return [base_name(e) for e in self.entries]

    def _function(self, name: str):
        entry = resolve(self.entries, name) or name
        fn = self._functions.get(entry)
        if fn is None:
            fn = self._functions[entry] = self.module.get_function(entry)
        return entry, fn

    # -- memory -------------------------------------------------------------------------------
    def alloc(self, count: int, dtype) -> Buffer:
        dtype = np.dtype(dtype)
        with self.stream:
            arr = self.cupy.empty(max(int(count), 1), dtype=dtype)
        return Buffer(arr, dtype, int(count))

    def upload(self, array: np.ndarray) -> Buffer:
        host = np.ascontiguousarray(array).reshape(-1)
        with self.stream:
            arr = self.cupy.empty(max(host.size, 1), dtype=host.dtype)
            if host.size:
                arr[:host.size].set(host, stream=self.stream)
        return Buffer(arr, host.dtype, int(host.size))

    def _view(self, buf: Buffer):
        return buf.handle[buf.offset:buf.offset + buf.size]

    def download(self, buf: Buffer) -> np.ndarray:
        out = self._view(buf).get(stream=self.stream)
        self.stream.synchronize()
        return out

    def memset(self, buf: Buffer, byte: int) -> None:
        if buf.nbytes:
            self.cupy.cuda.runtime.memsetAsync(self.pointer(buf), int(byte) & 0xFF, buf.nbytes, self.stream.ptr)

    def copy(self, dst: Buffer, src: Buffer) -> None:
        """Device-to-device copy on the backend's stream (restoring in-out buffers between samples)."""
        n = min(dst.nbytes, src.nbytes)
        if n:
            self.cupy.cuda.runtime.memcpyAsync(self.pointer(dst), self.pointer(src), n,
                                               self.cupy.cuda.runtime.memcpyDeviceToDevice, self.stream.ptr)

    def equal(self, a: Buffer, b: Buffer) -> bool:
        """Bytewise equality on the device, in the widest word both addresses and the size allow;
        one reduction kernel, no full-size temporary. Ordered after the work on the backend's stream."""
        if a.nbytes != b.nbytes:
            return False
        if a.nbytes == 0:
            return True
        cp = self.cupy
        pa, pb = self.pointer(a), self.pointer(b)
        word = next(w for w in (8, 4, 2, 1) if pa % w == 0 and pb % w == 0 and a.nbytes % w == 0)
        kind = {8: cp.uint64, 4: cp.uint32, 2: cp.uint16, 1: cp.uint8}[word]
        with self.stream:
            x = self._view(a).view(cp.uint8).view(kind)
            y = self._view(b).view(cp.uint8).view(kind)
            differ = _differing_words(cp)(x, y)
            return int(differ.get(stream=self.stream)) == 0

    def pointer(self, buf: Buffer) -> int:
        return int(buf.handle.data.ptr) + buf.offset * np.dtype(buf.dtype).itemsize

    def tensor_map(self, buf: Buffer, fields: dict):
        """The driver's CUtensorMap (cuTensorMapEncodeTiled) for a tensor in buf, as a 128-byte
        structured scalar CuPy passes by value."""
        from cuda.bindings import driver as cu

        cu.cuInit(0)
        kind = {"bfloat16": "BFLOAT16", "tfloat32": "TFLOAT32"}.get(fields["dtype"], fields["dtype"].upper())
        rank = len(fields["global_dim"])
        u32, u64 = cu.cuuint32_t, cu.cuuint64_t  # the bindings take their own integer types
        err, tm = cu.cuTensorMapEncodeTiled(
            getattr(cu.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + kind), u32(rank), self.pointer(buf),
            [u64(v) for v in fields["global_dim"]],
            [u64(v) for v in (list(fields["global_strides"]) or [16])],  # rank 1: an unread stride, not []
            [u32(v) for v in fields["box_dim"]], [u32(v) for v in (fields["element_strides"] or [1] * rank)],
            cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(cu.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_" + fields["swizzle"].upper()),
            cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE if fields["oob_fill"] == "none"
            else cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
        if int(err) != 0:
            raise RuntimeError(f"cuTensorMapEncodeTiled failed: {err}")
        raw = np.array([int(v) for v in tm.opaque], np.uint64).tobytes()[:128]
        return np.frombuffer(raw, np.dtype([("words", "<u8", (16,))]))[0]

    # -- execution ----------------------------------------------------------------------------
    def launch(self, name: str, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int,
               args: list) -> None:
        entry, fn = self._function(name)
        params = self.entries.get(entry, [])
        values = []
        for i, a in enumerate(args):
            if isinstance(a, Buffer):
                values.append(np.uint64(self.pointer(a)))
            elif isinstance(a, np.generic):
                values.append(a)
            else:  # a plain number: the PTX parameter type decides its width
                ptype = params[i].type if i < len(params) else ("f32" if isinstance(a, float) else "s32")
                if ptype[0] in "ub" and not isinstance(a, float) and a < 0:
                    ptype = "s" + ptype[1:]  # NVRTC declares `int` params .u32: keep the bits of -1
                values.append(_NUMPY.get(ptype, np.int32)(a))
        if shared > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = int(shared)
        self.launches.setdefault((entry, int(np.prod(block)), int(shared)))
        with self.stream:  # RawKernel launches on the current stream
            fn(tuple(int(g) for g in grid), tuple(int(b) for b in block), tuple(values), shared_mem=int(shared))

    def external_stream(self, ptr: int):
        """A CuPy view of another library's stream (torch's), for timing its work with our events."""
        import warnings

        with warnings.catch_warnings():  # ExternalStream's replacement is missing from older CuPy
            warnings.simplefilter("ignore", DeprecationWarning)
            return self.cupy.cuda.ExternalStream(int(ptr))

    def synchronize(self) -> None:
        self.stream.synchronize()

    def close(self) -> None:
        self.module = None
        self._functions.clear()
        self._tmpdir.cleanup()

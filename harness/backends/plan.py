"""The launch-plan API a learner's launch.py calls, the same on the GPU and on the CPU emulator.

`Plan` wraps a Backend and checks every call the way the CUDA runtime would (block and grid limits,
shared memory, the kernel's parameter list) but earlier and more plainly: each mistake is a
LaunchError naming the line of launch.py that made it and what to do instead. The plan only ever
holds opaque Buffers, so the answer has to come from kernels.
"""
from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.backends.base import Backend, Buffer, DeviceFacts

MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)

# PTX parameter types → the numpy scalar the backend receives; pointers are u64 (or b64).
_INT_TYPES = {"s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
              "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
              "b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64}
_FLOAT_TYPES = {"f32": np.float32, "f64": np.float64}
_POINTER_TYPES = ("u64", "b64")


class TensorMapArg:
    """What gpu.tensor_map returns: a kernel argument for a `const __grid_constant__ CUtensorMap`
    parameter (the backend's 128 bytes: the driver's on a GPU, the emulator's on the CPU)."""

    def __init__(self, value, fields: dict):
        self.value, self.fields = value, fields

    def __repr__(self) -> str:
        return f"TensorMap({self.fields})"


_MAP_DTYPES = {"float32": "float32", "float16": "float16", "uint8": "uint8", "int8": "uint8",
               "uint16": "uint16", "int16": "uint16", "uint32": "uint32", "int32": "int32",
               "float64": "float64", "uint64": "uint64", "int64": "int64"}


def map_problem(nbytes: int, fields: dict) -> tuple[str, str] | None:
    """(what is wrong, what to do) with a tensor map's fields over a buffer of nbytes, or None:
    cuTensorMapEncodeTiled's own checks, and the tensor inside the buffer. The plan checks its
    maps with it, and the worker again for a map a plan process names (it trusts no message)."""
    from harness.emulator.tensormap import TensorMapError, encode_tiled

    try:
        encode_tiled(fields["dtype"], 0, fields["global_dim"], fields["global_strides"], fields["box_dim"],
                     fields["element_strides"], swizzle=fields["swizzle"], oob_fill=fields["oob_fill"])
        dims, strides = tuple(int(v) for v in fields["global_dim"]), tuple(int(v) for v in fields["global_strides"])
    except TensorMapError as exc:
        return str(exc), "the fields are cuTensorMapEncodeTiled's; dimension 0 is the innermost"
    except (KeyError, TypeError, ValueError) as exc:
        return f"malformed fields ({exc!r})", "pass the fields gpu.tensor_map takes"
    esize = {"uint8": 1, "uint16": 2, "float16": 2, "bfloat16": 2}.get(fields["dtype"], 8 if "64" in fields["dtype"] else 4)
    span = (dims[0] - 1) * esize + esize + sum((d - 1) * s for d, s in zip(dims[1:], strides))
    if span > nbytes:
        return (f"the tensor spans {span} bytes (dims {list(dims)}, strides {list(strides)}) but the buffer "
                f"holds {nbytes}", "check global_dim (innermost first) and the byte strides")
    return None


class LaunchError(Exception):
    """A launch plan asked for something no GPU would run; names launch.py's line."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 source: str | None = None):
        self.message, self.file, self.line, self.source = message, file, line, source
        where = f"{file}:{line}: " if file and line else ""
        super().__init__(where + message)


@dataclass(frozen=True)
class LaunchRecord:
    kernel: str  # the name launch.py asked for
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int  # dynamic shared bytes
    line: int | None  # launch.py's line

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


def cdiv(a: int, b: int) -> int:
    """Ceiling division for grid sizes: cdiv(1000, 256) == 4."""
    return -(-int(a) // int(b))


class Plan:
    """What launch.py calls `gpu`. Every method validates before it touches the backend."""

    def __init__(self, backend: Backend, launch_file: str | Path):
        self._backend = backend
        self._launch_file = str(Path(launch_file).resolve())
        self.launches: list[LaunchRecord] = []  # every launch of this run, for the report
        self._is_launch_file: dict[str, bool] = {}  # code object file name -> is it launch.py?

    # -- facts ---------------------------------------------------------------------------------
    @property
    def device(self) -> DeviceFacts:
        return self._backend.facts

    @staticmethod
    def cdiv(a: int, b: int) -> int:
        return cdiv(a, b)

    # -- tensor maps (TMA) ----------------------------------------------------------------------
    def tensor_map(self, buf: Buffer, global_dim, global_strides, box_dim, element_strides=None,
                   swizzle: str = "none", dtype: str | None = None, oob_fill: str = "none") -> TensorMapArg:
        """cuTensorMapEncodeTiled for a tensor in buf, as a kernel argument for a
        `const __grid_constant__ CUtensorMap` parameter. Dimension 0 is the innermost (contiguous)
        one; global_strides are the byte strides of dimensions 1..rank-1 (multiples of 16);
        box_dim is the tile one cp.async.bulk.tensor moves; swizzle 'none', '32B', '64B' or '128B'.
        dtype defaults to the buffer's ('bfloat16' or 'tfloat32' must be said: numpy has neither)."""
        self._buffer(buf, "tensor_map")
        name = dtype or _MAP_DTYPES.get(np.dtype(buf.dtype).name)
        if name is None:
            raise self._error(f"tensor_map: no TMA data type for a {np.dtype(buf.dtype).name} buffer",
                              "pass dtype='bfloat16' (or another CUtensorMapDataType name)")
        try:
            fields = {"dtype": name, "global_dim": tuple(int(v) for v in global_dim),
                      "global_strides": tuple(int(v) for v in global_strides),
                      "box_dim": tuple(int(v) for v in box_dim),
                      "element_strides": None if element_strides is None else tuple(int(v) for v in element_strides),
                      "swizzle": swizzle, "oob_fill": oob_fill}
        except (TypeError, ValueError) as exc:
            raise self._error(f"tensor_map: {exc}", "dimensions, strides and boxes are lists of ints") from None
        problem = map_problem(buf.nbytes, fields)
        if problem is not None:
            raise self._error(f"tensor_map: {problem[0]}", problem[1])
        make = getattr(self._backend, "tensor_map", None)
        if make is None:
            raise self._error("tensor_map: this backend has no tensor maps")
        return TensorMapArg(make(buf, fields), fields)

    # -- memory --------------------------------------------------------------------------------
    def empty(self, count: int, dtype="float32") -> Buffer:
        count, dtype = self._count(count, "empty"), self._dtype(dtype, "empty")
        return self._backend.alloc(count, dtype)

    def zeros(self, count: int, dtype="float32") -> Buffer:
        buf = self.empty(count, dtype)
        self._backend.memset(buf, 0)
        return buf

    def memset(self, buf: Buffer, byte: int = 0) -> None:
        self._buffer(buf, "memset")
        if isinstance(byte, bool) or not isinstance(byte, (int, np.integer)) or not 0 <= int(byte) <= 255:
            raise self._error(f"memset's byte must be an int in 0..255, got {byte!r}",
                              "memset fills bytes, like cudaMemset: gpu.memset(buf, 0)")
        self._backend.memset(buf, int(byte))

    def read(self, buf: Buffer, index: int = 0):
        """One element back to the host, e.g. a flag a host loop tests."""
        self._buffer(buf, "read")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= int(index) < buf.size:
            raise self._error(f"read index {index!r} is outside a buffer of {buf.size} elements")
        return self._backend.download(buf.view(int(index), 1))[0].item()

    # -- launches ------------------------------------------------------------------------------
    def launch(self, name: str, grid, block=None, args=(), shared: int = 0, **options) -> None:
        """options: a Python kernel's (Triton: num_warps, num_stages, constexprs); see dialect.py."""
        if not isinstance(name, str):
            raise self._error(f"the kernel name must be a string, got {name!r}")
        prepare = getattr(self._backend, "prepare", None)
        if prepare is not None:  # a Triton or numba kernel: compiled for this launch's specialisation
            if not isinstance(args, (tuple, list)):
                args = (args,)
            try:
                name, block, shared, args = prepare(name, self._dims(grid, "grid", MAX_GRID), block, shared,
                                                    list(args), options)
            except LaunchError as exc:
                raise self._error(exc.message) from None
        elif options or block is None:
            what = f"unknown argument {sorted(options)[0]!r}" if options else "block= is missing"
            raise self._error(f"gpu.launch: {what}", "a CUDA C launch takes name, grid, block, args, shared")
        params = self._backend.kernel_params(name)
        if params is None:
            names = list(getattr(self._backend, "kernel_names", lambda: [])())
            close = difflib.get_close_matches(name, names, n=1)
            known = f" (kernel.cu defines: {', '.join(names)})" if names else ""
            hint = f"did you mean {close[0]!r}?" if close else \
                "declare it `extern \"C\" __global__` in kernel.cu, or fix the name in launch.py"
            raise self._error(f"kernel.cu has no kernel named {name!r}{known}", hint)
        grid3 = self._dims(grid, "grid", MAX_GRID)
        block3 = self._dims(block, "block", None)
        threads = block3[0] * block3[1] * block3[2]
        limit = self.device.max_threads_per_block
        if threads > limit:
            shown = block3[0] if block3[1:] == (1, 1) else block3
            raise self._error(f"block {shown} has {threads} threads; a block may have at most {limit}",
                              "use 1024 threads or fewer per block and more blocks in the grid")
        self._limits(block3, "block", MAX_BLOCK)
        if isinstance(shared, bool) or not isinstance(shared, (int, np.integer)) or shared < 0:
            raise self._error(f"shared must be a number of bytes (int >= 0), got {shared!r}")
        max_shared = self.device.max_shared_per_block_optin
        if shared > max_shared:
            raise self._error(f"shared={int(shared)} bytes of dynamic shared memory; the "
                              f"{self.device.name} allows at most {max_shared} per block",
                              "use a smaller tile or fewer elements per block")
        if not isinstance(args, (tuple, list)):
            args = (args,)
        converted = self._args(name, list(args), params)
        frame = self._launch_frame()
        self.launches.append(LaunchRecord(name, grid3, block3, int(shared), frame.f_lineno if frame else None))
        self._backend.launch(name, grid3, block3, int(shared), converted)

    # -- checks --------------------------------------------------------------------------------
    def _args(self, name: str, args: list, params) -> list:
        if len(args) != len(params):
            types = ", ".join(p.type for p in params)
            raise self._error(f"{name} takes {len(params)} arguments ({types}), launch.py passed {len(args)}",
                              "pass one argument per kernel parameter, in order")
        out = []
        for i, (value, param) in enumerate(zip(args, params), start=1):
            ptype = param.type
            what = f"argument {i} of {name} (PTX {ptype})"
            if isinstance(value, TensorMapArg):
                if ptype != "b8":
                    raise self._error(f"{what} is not a CUtensorMap but launch.py passed gpu.tensor_map(...)",
                                      "declare the parameter `const __grid_constant__ CUtensorMap map`")
                out.append(value.value)
            elif isinstance(value, Buffer):
                if ptype not in _POINTER_TYPES:
                    raise self._error(f"{what} is a number in kernel.cu but launch.py passed a device buffer",
                                      "check the order of args against the kernel's parameters")
                out.append(value)
            elif isinstance(value, np.ndarray):
                raise self._error(f"{what} is a numpy array: launch plans pass device buffers only",
                                  "allocate temporaries with gpu.empty / gpu.zeros")
            elif ptype in _FLOAT_TYPES:
                if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                    raise self._error(f"{what} needs a number, got {type(value).__name__}")
                out.append(_FLOAT_TYPES[ptype](value))
            elif ptype in _INT_TYPES:
                if isinstance(value, (float, np.floating)):
                    raise self._error(f"{what} is an integer but launch.py passed the float {value!r}",
                                      "convert explicitly with int(...) if truncation is what you mean")
                if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                    raise self._error(f"{what} needs an int, got {type(value).__name__}"
                                      + (" (a pointer parameter needs a device buffer)" if ptype in _POINTER_TYPES else ""))
                # PTX declares C's `int` as u32 (signedness lives in the instructions, not the
                # parameter), so any value of the signed or unsigned type of that width is accepted.
                bits = np.dtype(_INT_TYPES[ptype]).itemsize * 8
                if not -(1 << (bits - 1)) <= int(value) < (1 << bits):
                    raise self._error(f"{what}: {int(value)} does not fit in {bits} bits")
                out.append(np.array(int(value) & ((1 << bits) - 1), np.uint64).astype(_INT_TYPES[ptype])[()])
            else:
                raise self._error(f"{what}: parameters of type {ptype} (structs, vectors) are not supported",
                                  "pass scalars and pointers only")
        return out

    def _dims(self, value, what: str, limits) -> tuple[int, int, int]:
        if type(value) is int:  # the common `block=256`: skip the general parsing (runs per launch)
            dims = (value, 1, 1)
        else:
            dims = tuple(value) if isinstance(value, (tuple, list)) else (value,)
            if not 1 <= len(dims) <= 3:
                raise self._error(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}")
            for d in dims:
                if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
                    raise self._error(f"{what} {value!r} must hold ints, not {type(d).__name__}",
                                      "use gpu.cdiv(n, threads) for a whole number of blocks")
            dims = tuple(int(d) for d in dims) + (1,) * (3 - len(dims))
        self._limits(dims, what, limits)
        return dims

    def _limits(self, dims: tuple[int, int, int], what: str, limits) -> None:
        for axis, d, top in zip("xyz", dims, limits or (2**31 - 1,) * 3):
            if not 1 <= d <= top:
                raise self._error(f"{what}.{axis} = {d} is outside 1..{top}",
                                  "a launch with an empty grid or block does nothing on a GPU: check the arithmetic")

    def _count(self, count, what: str) -> int:
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise self._error(f"{what}({count!r}, ...): the element count must be an int >= 0")
        return int(count)

    def _dtype(self, dtype, what: str) -> np.dtype:
        try:
            return np.dtype(dtype)
        except TypeError:
            raise self._error(f"{what}(..., {dtype!r}): not a numpy dtype name such as 'float32'") from None

    def _buffer(self, buf, what: str) -> None:
        if not isinstance(buf, Buffer):
            raise self._error(f"{what} needs a device buffer, got {type(buf).__name__}")

    def _launch_frame(self):
        """launch.py's innermost frame on the stack, or None. Runs on every launch, so it compares
        code objects' file names as given and resolves each distinct name once per plan."""
        frame = sys._getframe(1)
        known = self._is_launch_file
        while frame is not None:
            name = frame.f_code.co_filename
            mine = known.get(name)
            if mine is None:
                mine = known[name] = str(Path(name).resolve()) == self._launch_file
            if mine:
                return frame
            frame = frame.f_back
        return None

    def _caller(self) -> tuple[str | None, int | None, str | None]:
        """(file name, line, source text) of the line the learner wrote; only errors pay for the
        file read."""
        frame = self._launch_frame()
        name = Path(self._launch_file).name
        if frame is None:
            return name, None, None
        line = frame.f_lineno
        try:
            source = Path(self._launch_file).read_text().splitlines()[line - 1].strip()
        except (OSError, IndexError):
            source = None
        return name, line, source

    def _error(self, message: str, hint: str | None = None) -> LaunchError:
        file, line, source = self._caller()
        return LaunchError(message + (f"; {hint}" if hint else ""), file, line, source)

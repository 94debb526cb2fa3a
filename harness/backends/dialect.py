"""A backend for kernels written in Python (Triton, numba): compiles each launch's specialisation
in the worker, then hands the PTX (CPU) or cubin (GPU) to the backend it wraps.

Everything after the PTX is shared with CUDA C: the emulator, its sanitizer and counters, the GPU
launch and the timing. The plan calls `prepare` before its own checks, so the compiled kernel's
parameters (numba's seven per array, Triton's trailing scratch pointers) are checked as any
kernel's are; each specialisation is compiled once per worker and loaded once per backend.
"""
from __future__ import annotations

import importlib
import inspect
import os
from pathlib import Path

import numpy as np

from harness.backends.base import Backend, Buffer, KernelParam
from harness.backends.plan import LaunchError
from harness.frontends import languages

TRITON_OPTIONS = ("num_warps", "num_stages", "constexprs")
#: per worker: kernel.py path → (mtime, module, {name: fn}); (path, key) → CompiledKernel
_MODULES: dict = {}
_COMPILED: dict = {}
#: attributes of the wrapped backend that hold its loaded module (CpuBackend, GpuBackend)
_MODULE_STATE = ("_module", "module", "entries", "_functions")


def _frontend(language: str):
    return importlib.import_module(languages.get(language).frontend)


def loaded(path: Path):
    """(language, {kernel name: its parameters}) of kernel.py, imported once per worker and file
    version in a sandboxed process of its own (harness/sandbox/kernel_proc.py), never here: the
    worker holds the kata's data and runs no learner code."""
    from harness.sandbox.kernel_proc import KernelProcess

    path = Path(path).resolve()
    mtime = os.stat(path).st_mtime_ns
    hit = _MODULES.get(path)
    if hit is None or hit[0] != mtime:
        if hit is not None:
            hit[1].close()
        process = KernelProcess(path)
        hit = _MODULES[path] = (mtime, process)
    return hit[1].language, hit[1].kernels


def _process(path: Path):
    return _MODULES[Path(path).resolve()][1]


class DialectBackend(Backend):
    def __init__(self, inner: Backend, kernel_path: str | Path):
        self.inner = inner
        self.path = Path(kernel_path).resolve()
        self.name = inner.name
        self.facts = inner.facts
        self.language, self._kernels = loaded(self.path)
        self._fe = _frontend(self.language)
        self._states: dict = {}  # specialisation key → the inner backend's module attributes
        self._tokens: dict[str, tuple] = {}  # launch name → (specialisation key, entry), for launch
        self._token_of: dict = {}  # specialisation key → its launch name

    def __getattr__(self, attr):  # findings, stopped, counters, launches, stream, pointer, ...
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    # -- the plan's hook -----------------------------------------------------------------------
    def prepare(self, name: str, grid: tuple, block, shared, args: list, options: dict):
        """(entry, block, shared, args) of the launch the plan asked for, compiled and loaded."""
        fn = self._kernels.get(name)
        if fn is None:
            known = ", ".join(sorted(self._kernels)) or "none"
            decorator = "@triton.jit" if self.language == "triton" else "@cuda.jit"
            raise LaunchError(f"{self.path.name} has no {decorator} kernel named {name!r} (it defines: {known})")
        if self.language == "triton":
            return self._prepare_triton(name, fn, grid, block, shared, list(args), options)
        return self._prepare_numba(name, fn, block, shared, list(args), options)

    def _prepare_triton(self, name, fn, grid, block, shared, args, options):
        unknown = sorted(set(options) - set(TRITON_OPTIONS))
        if unknown:
            raise LaunchError(f"unknown launch option {unknown[0]!r} for a Triton kernel; the options are "
                              + ", ".join(TRITON_OPTIONS))
        num_warps, num_stages = options.get("num_warps", 4), options.get("num_stages", 3)
        for what, v in (("num_warps", num_warps), ("num_stages", num_stages)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise LaunchError(f"{what} must be an int >= 1, got {v!r}")
        if num_warps & (num_warps - 1) or num_warps > 32:
            raise LaunchError(f"num_warps={num_warps}: Triton needs a power of two up to 32")
        constexprs = dict(options.get("constexprs") or {})
        declared = [p.name for p in fn.params if p.is_constexpr]
        for key in constexprs:
            if key not in fn.arg_names:
                raise LaunchError(f"constexprs names {key!r}, which is not a parameter of {name}")
            if key not in declared:
                raise LaunchError(f"{name}'s parameter {key!r} is not declared `: tl.constexpr`")
        for p in fn.params:
            if p.is_constexpr and p.name not in constexprs:
                if p.default is inspect.Parameter.empty:
                    raise LaunchError(f"{name} needs a value for its constexpr {p.name!r}: "
                                      f"constexprs=dict({p.name}=...)")
                constexprs[p.name] = p.default
        runtime = [p for p in fn.arg_names if p not in constexprs]
        if len(args) != len(runtime):
            raise LaunchError(f"{name} takes {len(runtime)} runtime arguments ({', '.join(runtime)}), "
                              f"launch.py passed {len(args)}; constexprs go in constexprs=dict(...)")
        types, divisible = {}, []
        for i, (pname, value) in enumerate(zip(runtime, args)):
            kind, dtype = _describe(value, f"argument {pname!r} of {name}")
            types[pname] = self._fe.signature_type(kind, dtype)
            # Pointers at a 16-byte multiple are marked so, as Triton's launcher does (every buffer
            # starts aligned, so this costs no extra compile). Ints are not specialised on % 16:
            # each case's sizes would compile another PTX (2 s each); tl.multiple_of says it instead.
            if kind == "pointer" and value.offset * np.dtype(value.dtype).itemsize % 16 == 0:
                divisible.append(fn.arg_names.index(pname))
        key = (name, tuple(sorted(types.items())), tuple(sorted((k, repr(v)) for k, v in constexprs.items())),
               tuple(divisible), int(num_warps), int(num_stages))
        from harness.sandbox.kernel_proc import CompileTriton

        compiled = self._compile(key, lambda: _process(self.path).compile(CompileTriton(
            name, types, constexprs, list(divisible), int(num_warps), int(num_stages))))
        threads = compiled.threads or 32 * int(num_warps)
        if block is not None:
            dims = tuple(block) if isinstance(block, (tuple, list)) else (block,)
            total = int(np.prod([int(d) for d in dims]))
            if total != threads:
                raise LaunchError(f"block {block!r} has {total} threads, but the compiled {name} runs "
                                  f"32 x num_warps = {threads} (its PTX says .reqntid {threads}); "
                                  "leave block out for a Triton kernel")
        if shared:
            raise LaunchError("shared= is not for Triton kernels: the compiler decides their shared memory "
                              f"({compiled.shared} bytes for this one)")
        programs = int(np.prod(grid))
        scratch = [self.inner.alloc(size * programs, np.uint8) if size else 0 for size in compiled.scratch]
        return self._activate(key, compiled), (threads, 1, 1), compiled.shared, args + scratch

    def _prepare_numba(self, name, fn, block, shared, args, options):
        if options:
            raise LaunchError(f"unknown launch option {sorted(options)[0]!r}: a numba kernel takes grid, "
                              "block, args and shared")
        if block is None:
            raise LaunchError("a numba kernel needs block= (threads per block)")
        params = fn.arg_names
        if len(args) != len(params):
            raise LaunchError(f"{name} takes {len(params)} arguments ({', '.join(params)}), launch.py passed {len(args)}")
        described = [_describe(v, f"argument {p!r} of {name}") for p, v in zip(params, args)]
        on_gpu = self.inner.name == "gpu"
        key = (name, tuple(described), on_gpu)
        from harness.sandbox.kernel_proc import CompileNumba

        compiled = self._compile(key, lambda: _process(self.path).compile(CompileNumba(
            name, [(k, d) for k, d in described], on_gpu)))
        flat = []
        for (kind, dtype), value in zip(described, args):
            if kind == "pointer":
                flat += self._fe.array_params(value.size, np.dtype(value.dtype).itemsize, value)
            else:
                flat.append(np.dtype(dtype).type(value))
        return self._activate(key, compiled), block, shared, flat

    def _compile(self, key, make):
        full = (str(self.path), os.stat(self.path).st_mtime_ns, key)
        hit = _COMPILED.get(full)
        if hit is None:
            hit = _COMPILED[full] = make()
        return hit

    def _activate(self, key, compiled) -> str:
        """Make the specialisation the wrapped backend's loaded module; returns the name its launches
        use: the entry, or `entry#N` when another specialisation (Triton's constexprs) shares it."""
        state = self._states.get(key)
        if state is None:
            if hasattr(self.inner, "_functions"):
                self.inner._functions = {}  # load() clears it: each specialisation keeps its own
            self.inner.load(compiled.ptx, compiled.cubin, self.path.name)
            state = self._states[key] = {a: getattr(self.inner, a) for a in _MODULE_STATE if hasattr(self.inner, a)}
            token = compiled.entry
            if token in self._tokens:
                token = f"{compiled.entry}#{len(self._states)}"
            self._tokens[token] = (key, compiled.entry)
            self._token_of[key] = token
        else:
            self._restore(key)
        return self._token_of[key]

    def _restore(self, key) -> None:
        for attr, value in self._states[key].items():
            setattr(self.inner, attr, value)

    # -- the Backend interface, forwarded ------------------------------------------------------
    def load(self, ptx, cubin, filename) -> None:
        return None  # kernels are compiled per launch (prepare)

    def _entry(self, name: str) -> str:
        """The entry a launch name stands for, its specialisation's module made the loaded one: a
        plan of several kernels replayed without its prepare calls (the plan host's replay of a
        timed run) must still reach each kernel's own module."""
        found = self._tokens.get(name)
        if found is None:
            return name
        self._restore(found[0])
        return found[1]

    def kernel_params(self, name: str) -> list[KernelParam] | None:
        return self.inner.kernel_params(self._entry(name))

    def kernel_names(self) -> list[str]:
        return sorted(self._kernels)

    def alloc(self, count, dtype) -> Buffer:
        return self.inner.alloc(count, dtype)

    def upload(self, array) -> Buffer:
        return self.inner.upload(array)

    def download(self, buf) -> np.ndarray:
        return self.inner.download(buf)

    def memset(self, buf, byte) -> None:
        self.inner.memset(buf, byte)

    def copy(self, dst, src) -> None:
        self.inner.copy(dst, src)

    def equal(self, a, b) -> bool:
        return self.inner.equal(a, b)

    def launch(self, name, grid, block, shared, args) -> None:
        self.inner.launch(self._entry(name), grid, block, shared, args)

    def tensor_map(self, buf, fields):
        return self.inner.tensor_map(buf, fields)

    def synchronize(self) -> None:
        self.inner.synchronize()

    def free(self, buf) -> None:
        self.inner.free(buf)

    def close(self) -> None:
        self.inner.close()


def _describe(value, what: str) -> tuple[str, str]:
    """(pointer | int | float, numpy dtype name) of a launch argument."""
    if isinstance(value, Buffer):
        return "pointer", np.dtype(value.dtype).name
    if isinstance(value, (bool, np.bool_)):
        raise LaunchError(f"{what} is a bool: pass an int (0 or 1)")
    if isinstance(value, np.integer):
        return "int", np.dtype(type(value)).name
    if isinstance(value, int):
        return "int", "int32" if -(1 << 31) <= value < (1 << 31) else "int64"
    if isinstance(value, np.floating):
        return "float", np.dtype(type(value)).name
    if isinstance(value, float):
        return "float", "float32"
    if isinstance(value, np.ndarray):
        raise LaunchError(f"{what} is a numpy array: launch plans pass device buffers only")
    raise LaunchError(f"{what} is a {type(value).__name__}: pass device buffers and numbers")

"""numba.cuda → PTX for sm_90 with no GPU: `numba.cuda.compile_ptx(fn, sig, cc=(9, 0), lineinfo=True)`
(numba-cuda; its libNVVM comes from the NVIDIA wheels).

The signature is built at launch from what the plan passes: a device buffer is a C-contiguous 1-D
array of its dtype, an int an int32 (int64 past its range), a float a float32. numba passes an
array as seven parameters (meminfo, parent, nitems, itemsize, data, shape, strides), which
`array_params` produces. The entry name is mangled (`_ZN...reduce...`): the dialect backend
launches it by the plan's name. lineinfo gives `.loc` lines at kernel.py.
"""
from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

from harness.frontends import languages
from harness.frontends.python_source import (CompiledKernel, FrontendUnavailable, KernelCompileError,
                                             source_line)

CC = (9, 0)
ARRAY_PARAMS = 7  # per 1-D array: meminfo, parent, nitems, itemsize, data, shape[0], strides[0]


def _cuda():
    import numpy as np

    if not hasattr(np, "row_stack"):
        # numba-cuda 0.30 registers an overload for np.row_stack whatever numpy it meets, and numpy 2.5
        # removed that alias of vstack: without it every compile fails with an AttributeError.
        np.row_stack = np.vstack
    try:
        import numba
        from numba import cuda
    except ImportError as exc:
        raise FrontendUnavailable(f"numba-cuda is not installed: run `{languages.get('numba').install}`") from exc
    return numba, cuda


def resolve_cuda() -> list[str]:
    """Find and load the CUDA libraries numba compiles with (libNVVM, NVRTC, libdevice, the headers)
    now, and return their folders. The kernel process calls this before its jail and Landlock rules:
    with its real environment and uid the search finds what the jailed, confined search did not (on
    the H200 image: a Python canary refused, then no libNVVM); the libraries stay loaded, and the
    folders become readable for the compile."""
    _cuda()
    try:
        from numba.cuda.cuda_paths import get_cuda_paths

        found = [info for _, info in get_cuda_paths().values() if isinstance(info, str) and info]
    except Exception:  # noqa: BLE001 - not found here either: the compile says so, in the jail
        return []
    return sorted({os.path.dirname(p) if os.path.isfile(p) else p for p in found if os.path.exists(p)})


def kernels(module) -> dict:
    """{name: python function} of the `@cuda.jit` kernels in a loaded kernel.py."""
    numba, cuda = _cuda()
    out = {}
    for name, obj in vars(module).items():
        py = getattr(obj, "py_func", None)
        if py is not None and type(obj).__module__.startswith("numba"):
            out[name] = py
    return out


def param_names(fn) -> list[str]:
    code = fn.__code__
    return list(code.co_varnames[:code.co_argcount])


def numba_type(kind: str, dtype: str):
    numba, _ = _cuda()
    import numpy as np

    if kind == "pointer":
        return numba.from_dtype(np.dtype(dtype))[::1]
    return numba.from_dtype(np.dtype(dtype))


def compile_kernel(fn, path: Path, types: list, cubin: bool = False) -> CompiledKernel:
    """types: numba types, one per parameter, in order; cubin: also link an sm_90 cubin (the GPU)."""
    numba, cuda = _cuda()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumbaPerformanceWarning and friends: not the learner's error
            ptx, _ = cuda.compile_ptx(fn, tuple(types), cc=CC, lineinfo=True)
    except Exception as exc:
        raise _compile_error(exc, fn, Path(path)) from None
    entry = re.search(r"\.entry\s+([\w$]+)", ptx)[1]
    return CompiledKernel(entry, ptx, _cubin(ptx) if cubin else None, None, 0)


def _cubin(ptx: str) -> bytes | None:
    """The sm_90 cubin of the PTX, by nvJitLink (the nvidia-nvjitlink wheel, no driver needed), so
    the GPU runs the same artefact as CUDA C does (a cubin loads on an older driver, PTX may not).
    None where nvJitLink is missing: the GPU backend then loads the PTX; the emulator needs none."""
    try:
        from cuda.bindings import nvjitlink
    except ImportError:
        return None
    try:
        handle = nvjitlink.create(1, [f"-arch=sm_{CC[0]}{CC[1]}"])
    except Exception:  # libnvJitLink.so absent behind the bindings
        return None
    try:
        data = ptx.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
        nvjitlink.complete(handle)
        buf = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, buf)
        return bytes(buf)
    except Exception:
        return None
    finally:
        nvjitlink.destroy(handle)


def array_params(buf_size: int, itemsize: int, data) -> list:
    """The seven values numba passes for a C-contiguous 1-D array."""
    return [0, 0, int(buf_size), int(itemsize), data, int(buf_size), int(itemsize)]


_LOC = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _compile_error(exc: Exception, fn, path: Path) -> KernelCompileError:
    """numba's TypingError and friends name `File "kernel.py", line N` in their text; a NameError
    names only the name, found here in the kernel's source."""
    text = str(exc)
    line = None
    for m in _LOC.finditer(text):
        if Path(m["file"]).name == path.name:
            line = int(m["line"])
    kept = [t.strip() for t in text.splitlines() if t.strip() and not t.startswith(("Failed in ", "During:"))]
    message = kept[0] if kept else type(exc).__name__
    call = next((t for t in kept if t.startswith(">>>")), None)
    if call:  # "No implementation of function ... found for signature:" then ">>> add(float32, ...)"
        message = f"{message} {call[3:].strip()}"
    name = re.search(r"name '(\w+)' is not defined", text)
    if line is None and name:
        line = _first_use(fn, path, name[1])
    return KernelCompileError(f"numba could not compile {fn.__name__}: {message}", path.name, line,
                              source_line(path, line))


def _first_use(fn, path: Path, name: str) -> int | None:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    start = fn.__code__.co_firstlineno
    word = re.compile(rf"\b{re.escape(name)}\b")
    return next((i for i in range(start, len(lines) + 1) if word.search(lines[i - 1])), None)

"""The compile interface: which front end turns the learner's file into PTX, and one call for all.

Every front end is a module with `compile(source, filename, *, cubin=False, options=(),
use_cache=True) -> nvrtc.CompileResult` (PTX always; a cubin and ptxas resources with cubin=True
where it can) and `available() -> bool`. CUDA C has two: NVRTC, the compiler of every GPU machine
and the default wherever it loads, and clang (clang.py), chosen where NVRTC is missing (macOS) or
on request with KATA_FRONTEND=clang. A front end for another language registers its file suffix
in the language registry (languages.py); everything after the PTX is shared.
"""
from __future__ import annotations

import dataclasses
import importlib
import os
from pathlib import PurePath

from .languages import compilers_for
from .nvrtc import CompileResult, CompilerUnavailable

#: front end name → module
FRONTENDS = {"nvrtc": "harness.frontends.nvrtc", "clang": "harness.frontends.clang"}
ENV = "KATA_FRONTEND"


def _module(name: str):
    return importlib.import_module(FRONTENDS[name])


def _available(name: str) -> bool:
    try:
        return bool(_module(name).available())
    except (ImportError, CompilerUnavailable):
        return False


def choose(filename: str = "kernel.cu", requested: str | None = None) -> tuple[str, str]:
    """(front end, why) for this file: KATA_FRONTEND (or `requested`) when set, else the first
    available front end of the file's language."""
    names = compilers_for(filename)
    asked = requested or os.environ.get(ENV, "").strip().lower()
    if asked:
        if asked not in FRONTENDS:
            raise CompilerUnavailable(f"{ENV}={asked}: choose one of {', '.join(FRONTENDS)}")
        return asked, f"{ENV}={asked}"
    for name in names:
        if _available(name):
            return name, ("the default" if name == names[0] else f"{names[0]} is not installed")
    raise CompilerUnavailable(f"no compiler for {PurePath(filename).name}: install NVRTC (Linux, Windows: "
                              "pip install nvidia-cuda-nvrtc cuda-bindings) or the clang front end "
                              "(pip install ziglang, then kata setup)")


def compile(source: str, filename: str = "kernel.cu", *, frontend: str | None = None,
            **kwargs) -> CompileResult:
    name, why = choose(filename, frontend)
    result = _module(name).compile(source, filename, **kwargs)
    default = compilers_for(filename)[0]
    if name != default:  # the report says so: a GPU machine compiles this file with the default
        result = dataclasses.replace(result, notes=(f"compiled with {name} ({why})", *result.notes))
    return result

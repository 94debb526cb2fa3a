"""CUDA C → PTX (for the emulator) and → sm_90 cubin (for the GPU and ptxas's resource report).

NVRTC is the only front end on both machines, so the learner sees the same compiler messages
everywhere. NVRTC and the CUDA headers come from the PyPI wheels (nvidia-cuda-nvrtc,
cuda-bindings, nvidia-cuda-runtime, nvidia-cuda-cccl), which work with no GPU and no driver; a
CUDA toolkit's include folder is used when the wheels' headers are absent. Results are cached on
disk by source hash and options.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.frontends.host_names import advice

#: the GPU we grade for; -lineinfo gives .loc lines so findings name the learner's file:line
ARCH = "90"
BASE_OPTIONS = ("-lineinfo", "-std=c++17")


class CompilerUnavailable(RuntimeError):
    """NVRTC could not be loaded: a setup problem, not the learner's."""

    hint = "pip install nvidia-cuda-nvrtc cuda-bindings"  # the next step, shown on its own line


@dataclass(frozen=True)
class Diagnostic:
    file: str  # file name as the learner knows it (e.g. kernel.cu)
    line: int | None  # 1-based line in that file, None for messages without one
    severity: str  # "error" | "warning" | "remark"
    message: str  # the compiler's text, without the "file(line): error:" prefix
    source_line: str | None = None  # the offending line as NVRTC quoted it


@dataclass(frozen=True)
class Resources:
    kernel: str  # entry name as it appears in PTX
    registers: int  # registers per thread
    shared_bytes: int  # static shared memory per block
    stack_bytes: int  # local memory (stack frame) per thread
    spill_stores: int  # bytes
    spill_loads: int  # bytes
    barriers: int  # named barriers used


@dataclass(frozen=True)
class CompileResult:
    ok: bool  # True when NVRTC produced code
    filename: str  # the learner's file name, used in every message
    log: str  # NVRTC's whole log
    diagnostics: tuple[Diagnostic, ...]  # the log, parsed and mapped to file:line
    ptx: str | None = None  # PTX for compute_90 (ok only)
    cubin: bytes | None = None  # sm_90 cubin (only from compile(..., cubin=True))
    resources: dict[str, Resources] = field(default_factory=dict)  # per kernel, from ptxas -v
    nvrtc_version: tuple[int, int] = (0, 0)
    frontend: str = "nvrtc"  # which front end made it (harness/frontends/interface.py)
    notes: tuple[str, ...] = ()  # what this front end could not provide (clang without ptxas: resources)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "warning")


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError:  # older cuda-python layout
        try:
            from cuda import nvrtc  # type: ignore[no-redef]
        except ImportError as exc:
            raise CompilerUnavailable(
                "NVRTC is not installed: run `pip install nvidia-cuda-nvrtc cuda-bindings`"
            ) from exc
    return nvrtc


def available() -> bool:
    """Whether NVRTC loads here (the compile interface's test; no NVRTC wheel exists for macOS)."""
    try:
        nvrtc_version()
    except CompilerUnavailable:
        return False
    return True


def nvrtc_version() -> tuple[int, int]:
    nvrtc = _nvrtc()
    try:
        _, major, minor = nvrtc.nvrtcVersion()
    except Exception as exc:  # libnvrtc.so missing behind the bindings
        raise CompilerUnavailable(f"NVRTC could not be loaded ({exc}); install nvidia-cuda-nvrtc") from exc
    return int(major), int(minor)


def include_dirs() -> list[str]:
    """Folders holding cuda_fp16.h, cuda_bf16.h, cooperative_groups.h and the cccl headers."""
    found: list[str] = []
    try:
        import nvidia  # namespace package of the NVIDIA wheels

        for root in map(Path, nvidia.__path__):
            for sub in ("cu13/include", "cu13/include/cccl", "cu12/include", "cuda_runtime/include",
                        "cuda_cccl/include"):
                if (root / sub).is_dir():
                    found.append(str(root / sub))
    except ImportError:
        pass
    if not any(Path(d, "cuda_fp16.h").exists() for d in found):
        for env in ("CUDA_PATH", "CUDA_HOME"):
            if os.environ.get(env):
                found.append(str(Path(os.environ[env], "include")))
        found.append("/usr/local/cuda/include")
    have = [d for d in found if Path(d).is_dir()]
    cccl = [str(Path(d, "cccl")) for d in have if Path(d, "cccl", "nv").is_dir()]
    return list(dict.fromkeys(have + cccl))


def _digest(ptx: str | None, cubin: bytes | None) -> str:
    return hashlib.sha256((ptx or "").encode()).hexdigest() + hashlib.sha256(cubin or b"").hexdigest()


def _cache_dir() -> Path:
    home = os.environ.get("KATA_HOME")
    if home:
        return Path(home) / "cache" / "compile"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("kata")) / "compile"


_DIAG = re.compile(r"^(?P<file>[^\n()]+?)\((?P<line>\d+)\): (?P<sev>error|warning|remark|catastrophic error)"
                   r"(?: #[\w-]+)?: (?P<msg>.*)$")


def parse_log(log: str, filename: str, source: str | None = None) -> tuple[Diagnostic, ...]:
    """Turn NVRTC's log into diagnostics; messages about headers are mapped to the learner's line
    only when NVRTC names it, otherwise kept with the header's name."""
    out: list[Diagnostic] = []
    lines = log.splitlines()
    for i, text in enumerate(lines):
        m = _DIAG.match(text)
        if not m:
            continue
        sev = "error" if "error" in m["sev"] else m["sev"]
        quoted = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].startswith("  ") else None
        out.append(Diagnostic(Path(m["file"]).name, int(m["line"]), sev, advice(m["msg"].strip()), quoted))
    if not out:
        from harness.frontends.ptxas_errors import explain

        refused = explain(log, source, filename, Diagnostic)
        if refused is not None:
            return (refused,)
    if not out and ("error" in log.lower()):
        out.append(Diagnostic(filename, None, "error", log.strip() or "NVRTC failed"))
    return tuple(out)


_PTXAS_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)'")
_PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?.*?(?:, (\d+) bytes smem)?$")


def parse_ptxas(log: str) -> dict[str, Resources]:
    res: dict[str, Resources] = {}
    name, frame = None, (0, 0, 0)
    for text in log.splitlines():
        if m := _PTXAS_ENTRY.search(text):
            name, frame = m["name"], (0, 0, 0)
        elif (m := _PTXAS_FRAME.search(text)) and name:
            frame = tuple(int(g) for g in m.groups())
        elif (m := _PTXAS_USED.search(text)) and name:
            smem = re.search(r"(\d+) bytes smem", text)
            res[name] = Resources(name, int(m[1]), int(smem[1]) if smem else 0, frame[0], frame[1], frame[2],
                                  int(m[2] or 0))
            name = None
    return res


def _run_nvrtc(source: str, filename: str, options: list[str], want: str) -> tuple[bool, str, bytes | str | None]:
    nvrtc = _nvrtc()
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), filename.encode(), 0, [], [])
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CompilerUnavailable(f"nvrtcCreateProgram failed: {err}")
    def fetch(size_fn, get_fn) -> bytes:
        # NVRTC writes into the buffer: a fresh bytearray, never `b" " * size`, which for size 1
        # is CPython's interned b" " and would corrupt every later use of that constant.
        _, size = size_fn(prog)
        buf = bytearray(size)
        get_fn(prog, buf)
        return bytes(buf)

    try:
        opts = [o.encode() for o in options]
        (res,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        log = fetch(nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog)
        log = log.decode(errors="replace").replace("\x00", "").strip()
        if res != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return False, log, None
        if want == "ptx":
            return True, log, fetch(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX).rstrip(b"\x00").decode()
        cubin = fetch(nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
        if want == "both":  # an sm_XX compile keeps its PTX too: (PTX or "" where this NVRTC does not, cubin)
            try:
                ptx = fetch(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX).rstrip(b"\x00").decode()
            except Exception:  # noqa: BLE001 - then the caller compiles the PTX on its own
                ptx = ""
            return True, log, (ptx, cubin)
        return True, log, cubin
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


_ARCH_SPECIFIC = re.compile(r"\bwgmma\b|\bsetmaxnreg\b")  # sm_90a-only instructions (in inline asm)


def arch_for(source: str) -> str:
    """sm_90a for a kernel that uses instructions only the arch-specific target has (wgmma,
    setmaxnreg), else sm_90: code for 90a runs only on sm_90 parts, which is what we grade on."""
    return ARCH + "a" if _ARCH_SPECIFIC.search(source) else ARCH


def compile(source: str, filename: str = "kernel.cu", *, cubin: bool = False,
            options: tuple[str, ...] = (), use_cache: bool = True, include_dir: str | Path | None = None,
            timeout_s: float | None = None) -> CompileResult:
    """Compile CUDA C. Always produces PTX (compute_90, or compute_90a for wgmma/setmaxnreg); with
    cubin=True also an sm_90(a) cubin and ptxas's per-kernel resource usage. include_dir: the
    workspace, whose regular header files are the only ones besides the CUDA headers an #include
    can reach (harness/frontends/compile_jail.py);
    the compile runs in a sandboxed child process stopped after timeout_s."""
    from harness.frontends import compile_jail

    version = nvrtc_version()
    arch = arch_for(source)
    incs = include_dirs()
    # Headers only when the learner asks for them: including cuda_fp16.h costs seconds.
    base = list(BASE_OPTIONS) + [f"-I{d}" for d in [*incs, compile_jail.KATA_INCLUDE]] + list(options)
    files = compile_jail.workspace_files(include_dir)
    # Every input of the compile keys the cache: the text, every file an #include could reach (by
    # content), the options, the front end and its version.
    inputs = [source, filename, base, cubin, version, "nvrtc",
              sorted((k, hashlib.sha256(v).hexdigest()) for k, v in files.items())]
    key = hashlib.sha256(json.dumps(inputs).encode()).hexdigest()[:32]
    cache = _cache_dir() / key
    if use_cache and (cache / "meta.json").exists():
        try:
            meta = json.loads((cache / "meta.json").read_text())
            ptx = (cache / "kernel.ptx").read_text()
            bin_ = (cache / "kernel.cubin").read_bytes() if (cache / "kernel.cubin").exists() else None
            # a cached result is used only if it is what this key stored (a file edited, swapped or
            # truncated in the cache is compiled again)
            if meta["key"] == key and meta["ok"] and _digest(ptx, bin_) == meta["digest"]:
                return CompileResult(
                    ok=True, filename=filename, log=meta["log"],
                    diagnostics=parse_log(meta["log"], filename, source), ptx=ptx, cubin=bin_ if cubin else None,
                    resources=parse_ptxas(meta.get("ptxas", "")), nvrtc_version=version)
        except (OSError, KeyError, ValueError):
            pass  # a damaged cache entry is recompiled

    def jailed(source, filename, options, want):  # _run_nvrtc, in the sandboxed child
        reply = compile_jail.run(compile_jail.Request(source, filename, list(options), want), files, incs,
                                 compile_jail.TIMEOUT_S if timeout_s is None else timeout_s)
        if not reply.ok:
            return False, reply.log, None
        return True, reply.log, (reply.ptx or "", reply.cubin) if want == "both" else \
            reply.ptx if want == "ptx" else reply.cubin
    ok, log, ptx, bin_, ptxas_log = False, "", None, None, ""
    if cubin:
        # One NVRTC run for both: the front end and NVVM once (the PTX of an sm_90 compile is the
        # compute_90 PTX, byte for byte), 1-3 s less per cold compile than two runs.
        ok, full, out = jailed(source, filename,
                                   base + [f"--gpu-architecture=sm_{arch}", "--ptxas-options=-v"], "both")
        ptxas_log = full
        # the learner's log: NVVM's messages, without ptxas's -v resource lines (kept for parse_ptxas)
        # (on a failure, NVVM's errors or ptxas's refusal, e.g. too much shared memory, all of it)
        log = "\n".join(line for line in full.splitlines() if not line.startswith("ptxas")).strip() if ok else full
        if ok:
            ptx, bin_ = out
    if not cubin or (ok and not ptx):  # PTX only, or an NVRTC that keeps no PTX of an sm_XX compile
        ok, log, ptx = jailed(source, filename, base + [f"--gpu-architecture=compute_{arch}"], "ptx")
    result = CompileResult(ok=ok, filename=filename, log=log, diagnostics=parse_log(log, filename, source),
                           ptx=ptx if ok else None, cubin=bin_ if ok else None,
                           resources=parse_ptxas(ptxas_log), nvrtc_version=version)
    # Only successes are kept: a failure can come from the installation (a header wheel added
    # later, as crt/mma.h was), and failing compiles are fast to repeat.
    if use_cache and ok:
        try:
            cache.mkdir(parents=True, exist_ok=True)
            (cache / "kernel.ptx").write_text(ptx)
            if bin_ is not None:
                (cache / "kernel.cubin").write_bytes(bin_)
            (cache / "meta.json").write_text(json.dumps({"ok": ok, "log": log, "ptxas": ptxas_log, "key": key,
                                                         "digest": _digest(ptx, bin_)}))
        except OSError:
            pass  # a read-only cache only costs time
    return result

"""NVRTC in a process of its own that can read only what a compile may read, under a time limit.

kernel.cu is the learner's text, and `#include` is a file read the preprocessor does for it: NVRTC
in the grader's process opened `/etc/passwd` (and quoted it in its errors), the locked solution, or
a FIFO that hung the grade and every interview command after it. So the grader copies the
workspace's regular files (no links, no FIFOs, bounded in number and size) into a fresh folder,
and a child process compiles there under harness/sandbox/os_sandbox.confine: it may read that
folder, the CUDA headers, kata's own headers and the libraries NVRTC loads, nothing else, and it is
killed when the limit passes. What it may read is exactly what keys the compile cache
(`workspace_files` below), so a changed header is a new compile.

Request and reply are msgspec messages on the child's stdin and stdout (no pickle).
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Union

import msgspec

#: seconds a compile may take (a cold compile with cuda_fp16.h and cccl takes a few on 2 cores)
TIMEOUT_S = 120.0
MAX_FILES = 64  # files of the workspace a compile can include
MAX_FILE_BYTES = 1 << 20
MAX_REPLY_BYTES = 256 << 20
#: kata's own headers: <cstdio> and <stdio.h> for printf, which NVRTC ships no header for
KATA_INCLUDE = str(Path(__file__).resolve().parent / "include")
_SOURCE_SUFFIXES = (".h", ".hpp", ".cuh", ".cu", ".inc", ".hh", ".hxx")


class Request(msgspec.Struct):
    source: str
    filename: str
    options: list[str]
    want: str  # ptx | cubin | both


class Reply(msgspec.Struct):
    ok: bool
    log: str
    ptx: Union[str, None] = None
    cubin: Union[bytes, None] = None


def workspace_files(folder: Union[str, Path, None]) -> dict[str, bytes]:
    """{relative path: bytes} of the regular files in `folder` a compile may include: header and
    source suffixes only, no symbolic links, no FIFOs or devices (opened without blocking, checked
    after opening), at most MAX_FILES of at most MAX_FILE_BYTES each, two folders deep."""
    found: dict[str, bytes] = {}
    if folder is None or not Path(folder).is_dir():
        return found
    root = Path(folder)
    for path in sorted(root.glob("*")) + sorted(root.glob("*/*")):
        if len(found) >= MAX_FILES or path.suffix not in _SOURCE_SUFFIXES or path.name.startswith("."):
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue  # a symbolic link (O_NOFOLLOW), unreadable: not offered to the compiler
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                continue
            with os.fdopen(os.dup(fd), "rb") as f:
                found[str(path.relative_to(root))] = f.read(MAX_FILE_BYTES)
        finally:
            os.close(fd)
    return found


def run(request: Request, files: dict[str, bytes], include_dirs: list[str], timeout_s: float = TIMEOUT_S) -> Reply:
    """Compile in the child, in a folder holding `files`; a stopped or failed child is a failed compile."""
    folder = tempfile.mkdtemp(prefix="kata-compile-")
    try:
        for rel, data in files.items():
            target = Path(folder, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        payload = msgspec.msgpack.encode([request, [*include_dirs, KATA_INCLUDE], folder])
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HOME")}
        env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                             *filter(None, [os.environ.get("PYTHONPATH")])])
        try:
            done = subprocess.run([sys.executable, "-s", "-c", _CHILD], input=payload, capture_output=True,
                                  timeout=timeout_s, cwd=folder, env=env, close_fds=True)
        except subprocess.TimeoutExpired:
            return Reply(False, f"the compile was stopped after {timeout_s:.0f} s (an #include of something "
                         "that never ends, or a template or constexpr computation too large)")
        if done.returncode != 0 or len(done.stdout) > MAX_REPLY_BYTES:
            why = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
            return Reply(False, f"the compiler's process failed: {why[0]}")
        try:
            return msgspec.msgpack.decode(done.stdout, type=Reply)
        except msgspec.MsgspecError as exc:
            return Reply(False, f"the compiler's process answered nonsense: {exc}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def readable(include_dirs: list[str], folder: str) -> list[str]:
    """What the child may read: its folder, the headers, the standard library, and the packages
    that hold NVRTC's bindings and libraries (nvidia/, cuda/), which load lazily."""
    import importlib.util
    import sysconfig

    roots = [folder, *include_dirs, KATA_INCLUDE, sysconfig.get_paths()["stdlib"]]
    for name in ("nvidia", "cuda", "msgspec"):
        spec = importlib.util.find_spec(name)
        if spec is not None:
            roots += list(spec.submodule_search_locations or [])
    roots += [str(Path(__file__).resolve().parents[1])]  # harness/
    return [r for r in roots if r and os.path.isdir(r)]


_CHILD = "from harness.frontends.nvrtc_child import main; main()"

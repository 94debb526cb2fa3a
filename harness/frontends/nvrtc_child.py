"""The child process of harness/frontends/compile_jail.py: NVRTC loaded, then the sandbox, then one
compile of the request on stdin, its reply on stdout (both msgspec MessagePack)."""
from __future__ import annotations

import sys

import msgspec

from harness.frontends import compile_jail, nvrtc
from harness.sandbox import os_sandbox


def main() -> None:
    request, include_dirs, folder = msgspec.msgpack.decode(sys.stdin.buffer.read())
    request = msgspec.convert(request, compile_jail.Request)
    nvrtc.nvrtc_version()  # libnvrtc loaded before the sandbox
    os_sandbox.confine(compile_jail.readable(include_dirs, folder), cpu_s=int(compile_jail.TIMEOUT_S) + 5)
    ok, log, out = nvrtc._run_nvrtc(request.source, request.filename, request.options, request.want)
    ptx, cubin = (out if request.want == "both" else (out, None) if request.want == "ptx" else (None, out)) \
        if ok else (None, None)
    sys.stdout.buffer.write(msgspec.msgpack.encode(compile_jail.Reply(ok, log, ptx or None, cubin)))

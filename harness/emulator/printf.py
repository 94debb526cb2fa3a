"""Device printf on the emulator: what NVRTC's `vprintf(format, args)` call does on a GPU.

NVRTC lowers `printf("x %d %f\n", i, v)` to a format string in a .global byte array and the
arguments packed into the thread's local memory, each at its natural alignment (int 4 bytes,
double, long and pointers 8; floats are promoted to double, chars and shorts to int, as C's
varargs rules say), then `call.uni (retval0), vprintf, (param0, param1)` with the two generic
addresses. Each thread's line is kept with its block and thread; the report orders them by block
and thread and shows a bounded number (the GPU's printf buffer is bounded too).
"""
from __future__ import annotations

import bisect
import re

import numpy as np

from .memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE

KEEP = 2000  # lines kept per launch; the rest are counted
MAX_STRING = 4096  # bytes of one format or %s string
#: a field's width or precision (`%*d` with 1 << 30 once built a gigabyte string) and a line's length
MAX_FIELD, MAX_LINE = 512, 4096
_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|j|z|t|L)?([diouxXeEfFgGaAcsp%n])")


def _read(eng, lane: int, addr: int, n: int) -> bytes:
    """n bytes at a generic address as `lane` sees it (shared and local memory are per block and
    per thread), fewer when the allocation ends first."""
    u = int(addr)
    if 0 <= u - LOCAL_WINDOW < WINDOW_SIZE:
        buf, start, limit = eng.win.local.buf, int(eng.loc_base[lane]) + u - LOCAL_WINDOW, eng.local_size
        end = int(eng.loc_base[lane]) + limit
    elif 0 <= u - SHARED_WINDOW < WINDOW_SIZE:
        buf, start = eng.win.shared.buf, int(eng.sh_base[lane]) + u - SHARED_WINDOW
        end = int(eng.sh_base[lane]) + eng.shared_size
    else:
        mem = eng.mem
        k = bisect.bisect_right(mem.starts, u) - 1
        if k < 0 or u >= mem.ends[k]:
            return b""  # not an allocation: nothing to print (the GPU would print garbage or fault)
        return bytes(mem.read(u, np.uint8, min(n, mem.ends[k] - u)))
    return bytes(buf[start:min(start + n, end)])


def _string(eng, lane: int, addr: int) -> str:
    raw = _read(eng, lane, addr, MAX_STRING)
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def format_line(eng, lane: int, fmt_addr: int, args_addr: int) -> str:
    """The text printf writes for one thread."""
    fmt = _string(eng, lane, fmt_addr)
    pos = [0]  # offset in the argument buffer

    def take(size: int, kind: str):
        at = (pos[0] + size - 1) // size * size
        pos[0] = at + size
        raw = _read(eng, lane, args_addr + at, size).ljust(size, b"\0")
        return np.frombuffer(raw, {"i4": np.int32, "i8": np.int64, "u4": np.uint32, "u8": np.uint64,
                                   "f8": np.float64}[kind + str(size)])[0].item()

    def one(m: re.Match) -> str:
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            return "%"
        if width == "*":
            width = str(take(4, "i"))
        if prec == "*":
            prec = str(take(4, "i"))
        if width is not None:
            if width.startswith("-"):  # a negative * width is the - flag
                flags, width = flags + "-", width[1:]
            width = str(min(int(width), MAX_FIELD))
        if prec is not None:
            prec = str(min(int(prec), MAX_FIELD)) if not prec.startswith("-") else None
        wide = length in ("l", "ll", "j", "z", "t")
        spec = "%" + flags + (width or "") + (f".{prec}" if prec is not None else "")
        if conv in "di":
            return (spec + "d") % take(8 if wide else 4, "i")
        if conv in "ouxX":
            value = take(8 if wide else 4, "u")
            return (spec + ("d" if conv == "u" else conv)) % value
        if conv in "eEfFgG":
            return (spec + conv) % take(8, "f")
        if conv in "aA":
            return float(take(8, "f")).hex()
        if conv == "c":
            return (spec + "c") % chr(take(4, "i") & 0xFF)
        if conv == "s":
            return (spec + "s") % _string(eng, lane, take(8, "u"))
        if conv == "p":
            return "0x%x" % take(8, "u")
        return ""  # %n writes nothing on a GPU either
    line = _SPEC.sub(one, fmt)
    return line if len(line) <= MAX_LINE else line[:MAX_LINE] + f"… ({len(line) - MAX_LINE} more characters)"


def vprintf(eng, inst, rets, args):
    from .ops import PLAIN

    fmt_param, args_param = eng.pbuf[args[0]], eng.pbuf[args[1]]
    ret = eng.pbuf[rets[0]] if rets else None

    def run(sel):
        lanes = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else np.asarray(sel)
        log = eng.__dict__.setdefault("printed", [])
        for lane in lanes.tolist():
            if len(log) >= KEEP:
                eng.printed_cut = getattr(eng, "printed_cut", 0) + 1
                continue
            fmt_addr = int(fmt_param[lane, :8].view(np.uint64)[0])
            args_addr = int(args_param[lane, :8].view(np.uint64)[0])
            text = format_line(eng, lane, fmt_addr, args_addr)
            log.append((int(eng.lane_block[lane]), int(eng.lane_tid[lane]), len(log),
                        eng.block_xyz(int(eng.lane_block[lane])), eng.thread_xyz(int(eng.lane_tid[lane])), text))
            if ret is not None:
                ret[lane, :4] = np.frombuffer(np.int32(len(text.encode())).tobytes(), np.uint8)
    return PLAIN, run

"""What the worker sends the grader, without pickle: MessagePack (msgspec) with five extensions.

The grader must never unpickle what the worker sends: the worker is where a submission's kernels
run, and a pickle is a program. Here a reply is plain data, in which numpy arrays, tuples,
dictionaries with keys that are not strings, and kata's own dataclasses travel as extensions that
the grader rebuilds itself: an array from raw bytes beside a numeric dtype and a shape (sizes
checked), a dataclass only if its class is a dataclass defined in kata's `harness` or `grader`
packages, filled field by field without running its __init__. Anything else cannot be sent
("not transferable"), and a reply that does not decode is a malformed message.

Large arrays (SPILL_BYTES and more: a bench case's outputs, 256 MiB each) do not travel in the
message when the two sides share a spill folder (the worker's scratch, which the grader removes
whatever happens): the worker writes the array's bytes to a file there and the message names it;
the grader reads the file straight into a new array and deletes it. Two copies of the bytes instead
of eight (tobytes, the Ext, the encoder, the pipe both ways, the reader's buffer, the decoder's
bytearray): 0.8 GB of outputs took 11.7 s through the message on two busy cores, the whole GPU
timing call of transpose about 10 s more than its phases on the H200. The grader trusts the file no
more than the message: a plain name in the folder, opened without following links, a regular file with
no other name (no hard link) of exactly the array's size.
"""
from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import importlib
import itertools
import math
import os
import re
import stat

import msgspec
import numpy as np

MAX_BYTES = 16 << 30  # outputs of a case travel in the reply
SPILL_BYTES = 1 << 20  # arrays from this size go through the spill folder, when there is one
_ARRAY, _DATACLASS, _TUPLE, _MAP, _SPILLED = 1, 2, 3, 4, 5
_PACKAGES = ("harness.", "grader.")
_ENC = msgspec.msgpack.Encoder()
_SPILL_NAME = re.compile(r"w\d+-\d+\.bin")
_spilled = itertools.count()


class MalformedReply(Exception):
    pass


def pack(obj, spill: str | None = None) -> bytes:
    """obj as a message; spill: the folder large arrays are written to (None: all in the message)."""
    return _ENC.encode(_prepare(obj, spill))


def _spill(arr: np.ndarray, folder: str):
    """The array's bytes in a new file of folder, and the extension that names it (None: no room)."""
    name = f"w{os.getpid()}-{next(_spilled)}.bin"
    path = os.path.join(folder, name)
    try:
        os.makedirs(folder, exist_ok=True)
        with open(path, "xb") as f:
            f.write(memoryview(np.ascontiguousarray(arr)).cast("B"))
    except OSError:  # a full disk, a folder gone: the message carries it
        with contextlib.suppress(OSError):
            os.unlink(path)
        return None
    return msgspec.msgpack.Ext(_SPILLED, _ENC.encode([arr.dtype.str, list(arr.shape), name]))


def _prepare(obj, spill: str | None = None):
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return obj
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biufc" or obj.dtype.itemsize > 16:
            raise TypeError(f"an array of {obj.dtype} is not transferable")
        if spill is not None and obj.nbytes >= SPILL_BYTES:
            ext = _spill(obj, spill)
            if ext is not None:
                return ext
        head = _ENC.encode([obj.dtype.str, list(obj.shape)])
        return msgspec.msgpack.Ext(_ARRAY, len(head).to_bytes(4, "little") + head + np.ascontiguousarray(obj).tobytes())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, enum.Enum):
        return _prepare(obj.value, spill)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        cls = type(obj)
        fields = {f.name: _prepare(getattr(obj, f.name), spill) for f in dataclasses.fields(obj)}
        return msgspec.msgpack.Ext(_DATACLASS, _ENC.encode([cls.__module__, cls.__qualname__, fields]))
    if isinstance(obj, tuple):
        return msgspec.msgpack.Ext(_TUPLE, _ENC.encode([_prepare(v, spill) for v in obj]))
    if isinstance(obj, list):
        return [_prepare(v, spill) for v in obj]
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj):
            return {k: _prepare(v, spill) for k, v in obj.items()}
        return msgspec.msgpack.Ext(_MAP, _ENC.encode([[_prepare(k, spill), _prepare(v, spill)] for k, v in obj.items()]))
    raise TypeError(f"a {type(obj).__name__} is not transferable")


def unpack(data: bytes, spill: str | None = None):
    """The message's object; spill: the folder pack wrote large arrays to (their files are deleted)."""
    hook = functools.partial(_ext, spill=spill)
    try:
        return msgspec.msgpack.decode(data, ext_hook=hook)
    except (msgspec.MsgspecError, ValueError, TypeError, KeyError, ImportError, AttributeError, OSError) as exc:
        raise MalformedReply(f"the worker's reply is not kata's data ({exc})") from None


def _array_head(dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind not in "biufc" or not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ValueError(f"an array of {dtype} {shape}")
    return dtype, shape


def _unspill(data: memoryview, spill: str | None) -> np.ndarray:
    dtype, shape, name = msgspec.msgpack.decode(data)
    dtype, shape = _array_head(dtype, shape)
    if spill is None or not isinstance(name, str) or not _SPILL_NAME.fullmatch(name):
        raise ValueError(f"a spilled array {name!r} outside the spill folder")
    path = os.path.join(spill, name)
    fd = None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))  # a link: ELOOP
        with os.fdopen(fd, "rb") as f:
            fd = None
            st = os.fstat(f.fileno())
            size = math.prod(shape) * dtype.itemsize
            # a file the worker just wrote has one name: a second is a hard link to something else
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size != size or size > MAX_BYTES:
                raise ValueError("a spilled array whose file does not match its shape")
            out = np.empty(shape, dtype)
            if out.nbytes and f.readinto(memoryview(out).cast("B")) != out.nbytes:
                raise ValueError("a spilled array cut short")
    finally:
        if fd is not None:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
    return out


def _ext(code: int, data: memoryview, spill: str | None = None):
    if code == _SPILLED:
        return _unspill(data, spill)
    if code == _ARRAY:
        size = int.from_bytes(data[:4], "little")
        dtype, shape = _array_head(*msgspec.msgpack.decode(data[4:4 + size]))
        raw = data[4 + size:]
        if len(raw) != math.prod(shape) * dtype.itemsize:
            raise ValueError("an array whose bytes do not match its shape")
        return np.frombuffer(bytearray(raw), dtype).reshape(shape)  # writable, as an unpickled array was
    hook = functools.partial(_ext, spill=spill)
    if code == _TUPLE:
        return tuple(msgspec.msgpack.decode(data, ext_hook=hook))
    if code == _MAP:
        return {_key(k): v for k, v in msgspec.msgpack.decode(data, ext_hook=hook)}
    if code == _DATACLASS:
        module, name, fields = msgspec.msgpack.decode(data, ext_hook=hook)
        return _dataclass(module, name, fields)
    raise ValueError(f"unknown extension {code}")


def _key(k):
    return tuple(k) if isinstance(k, list) else k


def _dataclass(module: str, name: str, fields: dict):
    if not isinstance(module, str) or not module.startswith(_PACKAGES) or not isinstance(fields, dict):
        raise ValueError(f"{module}.{name} is not one of kata's classes")
    cls = importlib.import_module(module)
    for part in str(name).split("."):
        cls = getattr(cls, part)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise ValueError(f"{module}.{name} is not one of kata's data classes")
    known = {f.name for f in dataclasses.fields(cls)}
    if set(fields) != known:
        raise ValueError(f"{name} with fields {sorted(fields)}")
    obj = cls.__new__(cls)
    for key, value in fields.items():
        object.__setattr__(obj, key, value)
    return obj

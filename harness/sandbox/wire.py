"""What the worker sends the grader, without pickle: MessagePack (msgspec) with four extensions.

The grader must never unpickle what the worker sends: the worker is where a submission's kernels
run, and a pickle is a program. Here a reply is plain data, in which numpy arrays, tuples,
dictionaries with keys that are not strings, and kata's own dataclasses travel as extensions that
the grader rebuilds itself: an array from raw bytes beside a numeric dtype and a shape (sizes
checked), a dataclass only if its class is a dataclass defined in kata's `harness` or `grader`
packages, filled field by field without running its __init__. Anything else cannot be sent
("not transferable"), and a reply that does not decode is a malformed message.
"""
from __future__ import annotations

import dataclasses
import enum
import importlib
import math

import msgspec
import numpy as np

MAX_BYTES = 16 << 30  # outputs of a case travel in the reply
_ARRAY, _DATACLASS, _TUPLE, _MAP = 1, 2, 3, 4
_PACKAGES = ("harness.", "grader.")
_ENC = msgspec.msgpack.Encoder()


class MalformedReply(Exception):
    pass


def pack(obj) -> bytes:
    return _ENC.encode(_prepare(obj))


def _prepare(obj):
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return obj
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biufc" or obj.dtype.itemsize > 16:
            raise TypeError(f"an array of {obj.dtype} is not transferable")
        head = _ENC.encode([obj.dtype.str, list(obj.shape)])
        return msgspec.msgpack.Ext(_ARRAY, len(head).to_bytes(4, "little") + head + np.ascontiguousarray(obj).tobytes())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, enum.Enum):
        return _prepare(obj.value)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        cls = type(obj)
        fields = {f.name: _prepare(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        return msgspec.msgpack.Ext(_DATACLASS, _ENC.encode([cls.__module__, cls.__qualname__, fields]))
    if isinstance(obj, tuple):
        return msgspec.msgpack.Ext(_TUPLE, _ENC.encode([_prepare(v) for v in obj]))
    if isinstance(obj, list):
        return [_prepare(v) for v in obj]
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj):
            return {k: _prepare(v) for k, v in obj.items()}
        return msgspec.msgpack.Ext(_MAP, _ENC.encode([[_prepare(k), _prepare(v)] for k, v in obj.items()]))
    raise TypeError(f"a {type(obj).__name__} is not transferable")


def unpack(data: bytes):
    try:
        return msgspec.msgpack.decode(data, ext_hook=_ext)
    except (msgspec.MsgspecError, ValueError, TypeError, KeyError, ImportError, AttributeError) as exc:
        raise MalformedReply(f"the worker's reply is not kata's data ({exc})") from None


def _ext(code: int, data: memoryview):
    if code == _ARRAY:
        size = int.from_bytes(data[:4], "little")
        dtype, shape = msgspec.msgpack.decode(data[4:4 + size])
        dtype = np.dtype(dtype)
        if dtype.kind not in "biufc" or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ValueError(f"an array of {dtype} {shape}")
        raw = data[4 + size:]
        if len(raw) != math.prod(shape) * dtype.itemsize:
            raise ValueError("an array whose bytes do not match its shape")
        return np.frombuffer(bytearray(raw), dtype).reshape(shape)  # writable, as an unpickled array was
    if code == _TUPLE:
        return tuple(msgspec.msgpack.decode(data, ext_hook=_ext))
    if code == _MAP:
        return {_key(k): v for k, v in msgspec.msgpack.decode(data, ext_hook=_ext)}
    if code == _DATACLASS:
        module, name, fields = msgspec.msgpack.decode(data, ext_hook=_ext)
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

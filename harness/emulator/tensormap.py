"""Tensor maps (CUtensorMap) for cp.async.bulk.tensor: the fields of cuTensorMapEncodeTiled, its
checks, and the 128-byte object the emulator's TMA reads.

`encode_tiled` takes cuTensorMapEncodeTiled's arguments (dimension 0 is the innermost, contiguous
one; strides are in bytes and given for dimensions 1..rank-1) and returns 128 bytes to pass as a
`const __grid_constant__ CUtensorMap` kernel argument, or raises TensorMapError saying which field
is wrong, where the CUDA driver would return CUDA_ERROR_INVALID_VALUE. On a GPU the same fields go
to the driver (harness/backends), whose bytes are its own; the emulator's layout is its own too:
magic, type, rank, swizzle, fill, address, dims, strides, box, element strides.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

# CUtensorMapDataType, in the driver's numbering -> bytes per element
DTYPES = {"uint8": (0, 1), "uint16": (1, 2), "uint32": (2, 4), "int32": (3, 4), "uint64": (4, 8),
          "int64": (5, 8), "float16": (6, 2), "float32": (7, 4), "float64": (8, 8), "bfloat16": (9, 2),
          "float32_ftz": (10, 4), "tfloat32": (11, 4), "tfloat32_ftz": (12, 4)}
SWIZZLES = {"none": 0, "32B": 1, "64B": 2, "128B": 3}  # CUtensorMapSwizzle
SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}
_MAGIC = 0x4B544D31  # identifies a map made here
_FMT = "<IBBBB Q 5Q 4Q 5I 5B"


class TensorMapError(ValueError):
    """A tensor map the driver would refuse: the message names the field and the fix."""


@dataclass(frozen=True)
class TensorMap:
    dtype: int
    esize: int
    rank: int
    swizzle: int  # 0 none, 1 32B, 2 64B, 3 128B
    nan_fill: bool
    address: int
    dims: tuple[int, ...]  # innermost first
    strides: tuple[int, ...]  # bytes, one per dimension (dims[0]'s is the element size)
    box: tuple[int, ...]
    estrides: tuple[int, ...]

    def box_bytes(self) -> int:
        n = self.esize
        for b, e in zip(self.box, self.estrides):
            n *= -(-b // e)
        return n


def _dtype(name) -> tuple[int, int]:
    key = str(name).lower().replace("torch.", "").replace("bf16", "bfloat16")
    if key in DTYPES:
        return DTYPES[key]
    raise TensorMapError(f"tensor map data type {name!r}: use one of {', '.join(DTYPES)}")


def encode_tiled(dtype, address: int, global_dim, global_strides, box_dim, element_strides=None,
                 swizzle="none", interleave="none", oob_fill="none") -> bytes:
    """cuTensorMapEncodeTiled's checks, then the 128-byte map. Dimension 0 is the innermost."""
    code, esize = _dtype(dtype)
    dims, strides, box = [int(v) for v in global_dim], [int(v) for v in global_strides], [int(v) for v in box_dim]
    rank = len(dims)
    estr = [1] * rank if element_strides is None else [int(v) for v in element_strides]
    if not 1 <= rank <= 5:
        raise TensorMapError(f"a tensor map has 1 to 5 dimensions; global_dim has {rank}")
    if interleave not in ("none", None, 0):
        raise TensorMapError("interleaved tensor maps are not supported here: use interleave='none'")
    if len(strides) != rank - 1:
        raise TensorMapError(f"global_strides gives the byte stride of dimensions 1..{rank - 1}: {rank - 1} "
                             f"values for a rank-{rank} map, not {len(strides)}")
    if len(box) != rank or len(estr) != rank:
        raise TensorMapError(f"box_dim and element_strides need {rank} values each (one per dimension)")
    if int(address) % 16:
        raise TensorMapError(f"the tensor's global address {int(address):#x} is not 16-byte aligned")
    for k, d in enumerate(dims):
        if not 0 < d <= 2 ** 32:
            raise TensorMapError(f"global_dim[{k}] = {d}: each dimension is 1 to 2^32 elements")
    for k, s in enumerate(strides, 1):
        if s % 16 or not 0 < s < 2 ** 40:
            raise TensorMapError(f"global_strides[{k - 1}] (dimension {k}) = {s} bytes: strides are positive "
                                 "multiples of 16 bytes below 2^40 (pad the rows to a multiple of 16 bytes)")
    row = dims[0] * esize
    for k, s in enumerate(strides, 1):
        if s < row:
            raise TensorMapError(f"global_strides[{k - 1}] = {s} bytes is less than the {row} bytes dimension {k - 1} "
                                 "spans: rows would overlap (the strides are in bytes, for dimensions 1..rank-1)")
        row = s * dims[k]
    for k, b in enumerate(box):
        if not 0 < b <= 256:
            raise TensorMapError(f"box_dim[{k}] = {b}: a box is 1 to 256 elements in each dimension")
    if box[0] * esize % 16:
        raise TensorMapError(f"box_dim[0] * {esize} bytes = {box[0] * esize}: the box's inner dimension must span "
                             "a multiple of 16 bytes")
    for k, e in enumerate(estr):
        if not 0 < e <= 8:
            raise TensorMapError(f"element_strides[{k}] = {e}: element strides are 1 to 8")
    sw = SWIZZLES.get(swizzle if swizzle in SWIZZLES else {None: "none", 0: "none"}.get(swizzle, str(swizzle)))
    if sw is None:
        raise TensorMapError(f"swizzle {swizzle!r}: use one of {', '.join(SWIZZLES)}")
    if sw and box[0] * esize > SWIZZLE_BYTES[sw]:
        raise TensorMapError(f"with {swizzle} swizzling the box's inner dimension may span at most "
                             f"{SWIZZLE_BYTES[sw]} bytes; box_dim[0] = {box[0]} elements is {box[0] * esize}")
    if oob_fill not in ("none", "nan", None, 0, 1):
        raise TensorMapError("oob_fill is 'none' (zeros) or 'nan'")
    pad = lambda v, n: list(v) + [0] * (n - len(v))
    raw = struct.pack(_FMT, _MAGIC, code, rank, sw, 1 if oob_fill in ("nan", 1) else 0, int(address),
                      *pad(dims, 5), *pad(strides, 4), *pad(box, 5), *pad(estr, 5))
    return raw + bytes(128 - len(raw))


def decode(raw: bytes) -> TensorMap | None:
    """The map in 128 bytes made by encode_tiled, or None when they are not one."""
    if len(raw) < struct.calcsize(_FMT):
        return None
    f = struct.unpack_from(_FMT, raw)
    if f[0] != _MAGIC or not 1 <= f[2] <= 5:
        return None
    code, rank, sw, fill, addr = f[1], f[2], f[3], f[4], f[5]
    dims, strides, box, estr = f[6:11][:rank], f[11:15][:rank - 1], f[15:20][:rank], f[20:25][:rank]
    esize = next(s for c, s in DTYPES.values() if c == code)
    return TensorMap(code, esize, rank, sw, bool(fill), addr, tuple(dims), (esize, *strides), tuple(box),
                     tuple(estr))


def swizzle_offsets(offsets, mode: int):
    """Shared-memory byte offsets after the swizzle of `mode`: 16-byte chunk bits 4.. XOR bits 7..
    (the pattern TMA writes and wgmma's descriptors read)."""
    if not mode:
        return offsets
    mask = {1: 1, 2: 3, 3: 7}[mode]
    return offsets ^ (((offsets >> 7) & mask) << 4)


__all__ = ["DTYPES", "SWIZZLES", "TensorMap", "TensorMapError", "decode", "encode_tiled", "swizzle_offsets"]

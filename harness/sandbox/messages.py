"""The messages between the launch plan's process and the worker: typed, schema-checked, bounded.

Nothing that crosses from a process running learner code is unpickled: a pickle is a program (its
`__reduce__` can call `exec`), so a plan that wrote one down its pipe ran code in the worker, which
holds the kata's data. Each message here is a msgspec Struct encoded as MessagePack; decoding
builds only these Structs, numbers, strings, bytes, lists and dicts, checks every field's type,
and refuses a message longer than MAX_BYTES before reading it. A message that fails any of this is
MalformedMessage, and the worker ends the run with that as the reason.
"""
from __future__ import annotations

from typing import Any, Union

import msgspec

#: the longest message either side accepts (a launch with its arguments is a few hundred bytes)
MAX_BYTES = 1 << 20
TEXT_LIMIT = 4000  # characters of a problem's message the plan sends


class MalformedMessage(Exception):
    """A message that is not one this protocol allows (a pickle, the wrong fields, too long).
    readable: the stream is still in step (a whole message was read and refused), unlike after
    one too long to read."""

    def __init__(self, reason: str, readable: bool = True):
        super().__init__(reason)
        self.readable = readable


# -- values that travel -------------------------------------------------------------------------

class Buf(msgspec.Struct, array_like=True, tag="b"):
    """A device buffer as the plan names it: a handle the worker gave out, and a view of it."""

    handle: int
    dtype: str
    size: int
    offset: int = 0


class Num(msgspec.Struct, array_like=True, tag="n"):
    """A scalar launch argument with the numpy type the plan converted it to (f32 stays f32); dtype
    PLAIN: a Python int or float as launch.py passed it, which the backend types itself (a Triton
    kernel's float scalar is fp32, as it is without the sandbox, not a float64)."""

    dtype: str
    value: Union[int, float]


PLAIN = ""  # Num.dtype of a plain Python number


class Map(msgspec.Struct, array_like=True, tag="m"):
    """A tensor map (gpu.tensor_map) as the plan names it: the buffer and cuTensorMapEncodeTiled's
    fields, already checked in the plan process. The worker encodes it at launch, against the
    buffer's real address, which only the worker knows."""

    buf: Buf
    fields: dict


Arg = Union[Buf, Num, Map]


class Launched(msgspec.Struct, array_like=True):
    """harness.backends.plan.LaunchRecord on the wire."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    line: Union[int, None]


class Trouble(msgspec.Struct):
    """harness.sandbox.protocol.Problem on the wire."""

    kind: str
    message: str
    file: Union[str, None] = None
    line: Union[int, None] = None
    source: Union[str, None] = None


# -- plan → worker ---------------------------------------------------------------------------------

class Params(msgspec.Struct, tag="params"):
    name: str


class Names(msgspec.Struct, tag="names"):
    pass


class Alloc(msgspec.Struct, tag="alloc"):
    count: int
    dtype: str


class Memset(msgspec.Struct, tag="memset"):
    buf: Buf
    byte: int


class Read(msgspec.Struct, tag="read"):
    buf: Buf
    index: int


class Launch(msgspec.Struct, tag="launch"):
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    args: list[Arg]


class Sync(msgspec.Struct, tag="sync"):
    pass


class Prepare(msgspec.Struct, tag="prepare"):
    """A Python kernel's launch, compiled by the worker's front end (harness/backends/dialect.py)."""

    name: str
    grid: tuple[int, int, int]
    block: Union[int, list[int], None]
    shared: Union[int, None]
    args: list[Arg]
    options: dict[str, Any]


class Ready(msgspec.Struct, tag="ready"):
    enforced: dict[str, Any]


class Failed(msgspec.Struct, tag="problem"):
    problem: Trouble


class Done(msgspec.Struct, tag="done"):
    launches: list[Launched]
    out: str
    problem: Union[Trouble, None]


FromPlan = Union[Params, Names, Alloc, Memset, Read, Launch, Sync, Prepare, Ready, Failed, Done]


# -- worker → plan ---------------------------------------------------------------------------------

class Facts(msgspec.Struct):
    """harness.backends.base.DeviceFacts on the wire."""

    name: str
    sm_count: int
    max_threads_per_block: int
    max_shared_per_block: int
    max_shared_per_block_optin: int
    shared_per_sm: int
    warp_size: int
    l2_bytes: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int


class Run(msgspec.Struct, tag="run"):
    args: list[Arg]
    kwargs: dict[str, Arg]
    timeout_s: float
    facts: Facts
    dialect: bool


class Stop(msgspec.Struct, tag="stop"):
    pass


class Ok(msgspec.Struct, tag="ok"):
    value: Any = None


class Refused(msgspec.Struct, tag="refused"):
    reason: str


FromWorker = Union[Run, Stop, Ok, Refused]

_ENCODER = msgspec.msgpack.Encoder()
_FROM_PLAN = msgspec.msgpack.Decoder(FromPlan)
_FROM_WORKER = msgspec.msgpack.Decoder(FromWorker)


def send(conn, message: msgspec.Struct) -> None:
    conn.send_bytes(_ENCODER.encode(message))


def _receive(conn, decoder):
    try:
        raw = conn.recv_bytes(MAX_BYTES)
    except OSError as exc:
        if "bad message length" in str(exc):  # longer than MAX_BYTES: refused before it is read
            raise MalformedMessage(f"a message too large (over {MAX_BYTES >> 10} KiB)", readable=False) from None
        raise
    try:
        return decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise MalformedMessage(f"not a message of kata's plan protocol ({exc})") from None


def receive_from_plan(conn):
    """The plan's next message (EOFError when its process ended; MalformedMessage)."""
    return _receive(conn, _FROM_PLAN)


def receive_from_worker(conn):
    return _receive(conn, _FROM_WORKER)


# -- conversions ------------------------------------------------------------------------------------

def trouble(problem) -> Union[Trouble, None]:
    if problem is None:
        return None
    # bounded: a 20 MB exception text must not make the plan's answer too large to send
    source = None if problem.source is None else str(problem.source)[:TEXT_LIMIT]
    return Trouble(problem.kind, str(problem.message)[:TEXT_LIMIT], problem.file, problem.line, source)


def problem_of(trouble: Union[Trouble, None]):
    from harness.sandbox.protocol import Problem

    if trouble is None:
        return None
    return Problem(trouble.kind, trouble.message, trouble.file, trouble.line, trouble.source)


def facts(device) -> Facts:
    import dataclasses

    return Facts(**dataclasses.asdict(device))


def device_facts(wire: Facts):
    from harness.backends.base import DeviceFacts

    return DeviceFacts(**msgspec.structs.asdict(wire))

"""A numpy Backend for testing the grader without the emulator: "kernels" by name, behaviour chosen
by a marker kernel in kernel.cu (`extern "C" __global__ void mode_wrong() {}` selects "wrong")."""
from __future__ import annotations

import os
import time

import numpy as np

from harness.backends.base import H200, Backend, Buffer
from harness.emulator.findings import Finding
from harness.backends.gpu import base_name, parse_entries


class FakeBackend(Backend):
    name = "fake"
    facts = H200

    def __init__(self, sanitize: bool = False, counters: bool = False):
        self.sanitize = sanitize
        self.memory: dict[int, np.ndarray] = {}
        self.findings: list = []
        self.stopped = False
        self.next = 1 << 20

    def load(self, ptx, cubin, filename):
        self.entries = parse_entries(ptx)
        self.modes = {base_name(e)[5:] for e in self.entries if base_name(e).startswith("mode_")}

    def kernel_names(self):
        return sorted(base_name(e) for e in self.entries)

    def kernel_params(self, name):
        for entry, params in self.entries.items():
            if entry == name or base_name(entry) == name:
                return params
        return None

    def alloc(self, count, dtype):
        dtype = np.dtype(dtype)
        handle = self.next
        self.next += 1 << 20
        self.memory[handle] = np.zeros(max(count * dtype.itemsize, 1), np.uint8)
        return Buffer(handle, dtype, count)

    def _array(self, buf):
        raw = self.memory[buf.handle]
        start = buf.offset * buf.dtype.itemsize
        return raw[start:start + buf.nbytes].view(buf.dtype)

    def upload(self, array):
        buf = self.alloc(array.size, array.dtype)
        self._array(buf)[:] = array.reshape(-1)
        return buf

    def download(self, buf):
        return self._array(buf).copy()

    def memset(self, buf, byte):
        if byte >= 200:
            misbehave(byte - 200)
        self._array(buf).view(np.uint8)[:] = byte

    def synchronize(self):
        pass

    def copy(self, dst, src):
        n = min(dst.nbytes, src.nbytes)
        self._array(dst).view(np.uint8)[:n] = self._array(src).view(np.uint8)[:n]

    def equal(self, a, b):
        return a.nbytes == b.nbytes and np.array_equal(self._array(a).view(np.uint8), self._array(b).view(np.uint8))

    def launch(self, name, grid, block, shared, args):
        if name == "copy":  # copy(src, dst, n): what a plan needs to get data into a buffer it owns
            self._array(args[1])[: int(args[2])] = self._array(args[0])[: int(args[2])]
        if name == "store":  # store(out, value): one thread writes a number the host computed
            self._array(args[0])[0] = args[1]
        if name != "reduce":
            return
        x, out, n = self._array(args[0]), self._array(args[1]), int(args[2])
        modes = self.modes
        if "evil" in modes:  # a compromised worker: a pickle that runs code wherever it is unpickled
            _send_evil_reply()
        if "hang" in modes:
            time.sleep(3600)
        if "crash" in modes:
            os.abort()
        if "hog" in modes:
            np.ones(1 << 36, np.uint8)  # 64 GiB: beyond the worker's address-space cap
        total = np.float32(x[: n - 1].sum() if "wrong" in modes and n > 100 else x[:n].sum())
        if "clobber" in modes:
            x[0] = 0
        if "nowrite" not in modes:
            out[0] += total
        if "oob" in modes and n % 2:
            self.findings.append(Finding("out-of-bounds", "global load 4 bytes past the end of x",
                                         "kernel.cu", 3, space="global"))
        if "race" in modes and self.sanitize:
            self.findings.append(Finding("race-raw", "thread (0,0,0) reads s[1] that thread (1,0,0) wrote",
                                         "kernel.cu", 4, space="shared"))


class _Evil:
    def __reduce__(self):
        return (exec, (f"open({os.environ['KATA_TEST_EVIL_MARK']!r}, 'w').write('pwned')",))


def _send_evil_reply():
    import pickle

    from harness.sandbox import worker

    worker.GRADER_CONN.send_bytes(pickle.dumps(_Evil()))


# How a Program names this backend (the worker imports it by module name).
FAKE = "fakes:make"


def make(sanitize=False, counters=False):
    return FakeBackend(sanitize=sanitize, counters=counters)


# -- targets for Worker.prefetch (background work in the worker) and Worker.call -------------------

def slow_mark(path, seconds=0.0):
    time.sleep(seconds)
    with open(path, "w") as f:
        f.write("done")


def boom(**_):
    raise RuntimeError("the prefetch failed")


def long_timing(launch_fn=None, launch_file=None, seconds=0.0, pid_file=None):
    """A `call` target standing in for a GPU timing that takes `seconds` (writes its pid first)."""
    if pid_file:
        with open(pid_file, "w") as f:
            f.write(str(os.getpid()))
    time.sleep(seconds)
    return {"slept": seconds}


def background_state(launch_fn=None, launch_file=None, path=None):
    """A `call` target: waits for the background work, then says what it left behind."""
    from harness.sandbox import worker

    waited, finished = worker.wait_background()
    mark = open(path).read() if path and os.path.exists(path) else None
    return {"mark": mark, "errors": list(worker.BACKGROUND_ERRORS), "finished": finished, "waited": waited}


# -- a worker that misbehaves on purpose (tests/harness/sandbox/test_worker_liveness.py) ---------------------

def _pipe_fd():
    """The worker's end of its pipe to the grader."""
    from harness.sandbox import worker

    return worker.GRADER_CONN.fileno()


def _grandchild_holds_the_pipe():
    if os.fork() == 0:  # inherits every descriptor, the pipe's end included
        time.sleep(40)
        os._exit(0)


def misbehave(mode):
    import signal

    if mode == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == 2:
        time.sleep(3600)
    if mode == 3:  # dies while a grandchild keeps the pipe open: no end-of-file ever comes
        _grandchild_holds_the_pipe()
        os.kill(os.getpid(), signal.SIGKILL)
    if mode in (4, 5, 6):  # half a reply: the header promises 1 MiB, 4 bytes follow
        if mode == 5:
            _grandchild_holds_the_pipe()
        os.write(_pipe_fd(), (1 << 20).to_bytes(4, "big") + b"half")
        if mode == 6:
            time.sleep(3600)  # wedged mid-message
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == 7:
        os.abort()


def big_output(launch_fn=None, launch_file=None, n=0):
    """A `call` target: an array of n float32 (a bench case's output, in small)."""
    import numpy as np

    return np.arange(n, dtype=np.float32)

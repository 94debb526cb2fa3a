"""Large arrays of a worker's reply travel as files of the worker's spill folder (harness/sandbox/wire.py):
the same arrays arrive, the files are gone after, the message stays small, and a reply that names a
file it should not (outside the folder, a link, the wrong size, a size the grader cannot afford)
is a malformed reply, never a read of that file."""
import os

import msgspec
import numpy as np
import pytest

from harness.sandbox import wire
from harness.sandbox.isolation import Worker
from harness.sandbox.protocol import Program


def _spilled(dtype, shape, name) -> bytes:
    return wire._ENC.encode({"out": msgspec.msgpack.Ext(wire._SPILLED, wire._ENC.encode([dtype, shape, name]))})


def test_large_arrays_arrive_through_files_that_are_then_deleted(tmp_path):
    big = np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024)  # 4 MiB: spilled
    small = np.arange(10, dtype=np.int16)  # in the message
    msg = wire.pack({"big": big, "nested": ({1: big[::2]},), "small": small}, str(tmp_path))
    assert len(msg) < 4096 and len(os.listdir(tmp_path)) == 2
    back = wire.unpack(msg, str(tmp_path))
    assert back["big"].dtype == np.float32 and (back["big"] == big).all()
    assert (back["nested"][0][1] == big[::2]).all() and (back["small"] == small).all()
    back["big"][0, 0] = -1  # writable, as before
    assert os.listdir(tmp_path) == []


def test_without_a_spill_folder_everything_is_in_the_message(tmp_path):
    big = np.ones(1 << 19, np.float64)
    msg = wire.pack({"big": big})
    assert len(msg) > big.nbytes and (wire.unpack(msg)["big"] == big).all()
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    msg = wire.pack({"big": big}, str(blocked / "wire"))  # no folder can be made there: inline
    assert len(msg) > big.nbytes and (wire.unpack(msg)["big"] == big).all()


@pytest.mark.parametrize("name", ["../secret.bin", "/etc/passwd", "w1-1.bin/../../x", "secret.bin"])
def test_a_name_outside_the_folder_is_refused(tmp_path, name):
    (tmp_path / "secret.bin").write_bytes(b"\0" * 16)
    folder = tmp_path / "wire"
    folder.mkdir()
    with pytest.raises(wire.MalformedReply, match="outside the spill folder"):
        wire.unpack(_spilled("<f4", [4], name), str(folder))
    assert (tmp_path / "secret.bin").exists()


def test_a_link_a_wrong_size_or_a_huge_claim_is_refused(tmp_path):
    secret = tmp_path / "secret"
    secret.write_bytes(b"\1" * 16)
    folder = tmp_path / "wire"
    folder.mkdir()
    os.symlink(secret, folder / "w1-1.bin")
    with pytest.raises(wire.MalformedReply):
        wire.unpack(_spilled("<f4", [4], "w1-1.bin"), str(folder))
    (folder / "w1-2.bin").write_bytes(b"\0" * 12)
    with pytest.raises(wire.MalformedReply, match="does not match its shape"):
        wire.unpack(_spilled("<f4", [4], "w1-2.bin"), str(folder))
    (folder / "w1-3.bin").write_bytes(b"\0" * 16)
    with pytest.raises(wire.MalformedReply, match="does not match its shape"):  # checked before any allocation
        wire.unpack(_spilled("<f8", [1 << 40, 1 << 20], "w1-3.bin"), str(folder))
    with pytest.raises(wire.MalformedReply, match="outside the spill folder"):
        wire.unpack(_spilled("<f4", [4], "w1-4.bin"), None)  # the grader gave no folder
    assert secret.read_bytes() == b"\1" * 16 and os.listdir(folder) == []


def test_a_worker_reply_with_a_large_array_arrives_and_leaves_no_file(tmp_path):
    launch = tmp_path / "launch.py"
    launch.write_text("def launch(gpu, x, out, n):\n    pass\n")
    with Worker(Program("cpu", None, None, "kernel.cu", str(launch)), timeout_s=60) as w:
        assert w.start() is None
        got, problem = w.call("fakes:big_output", 60.0, n=1 << 21)  # 8 MiB: through the spill folder
        assert problem is None and got.shape == (1 << 21,) and got[-1] == (1 << 21) - 1
        assert os.listdir(os.path.join(w._scratch, "wire")) == []


def test_a_hard_link_to_another_file_is_refused_and_that_file_kept(tmp_path):
    """Named w1-1.bin and of the claimed size, but another file's second name: its bytes are not
    read as the array, and only the link is removed."""
    other = tmp_path / "other"
    other.write_bytes(b"\7" * 16)
    folder = tmp_path / "wire"
    folder.mkdir()
    os.link(other, folder / "w1-1.bin")
    with pytest.raises(wire.MalformedReply, match="does not match its shape"):
        wire.unpack(_spilled("<f4", [4], "w1-1.bin"), str(folder))
    assert other.read_bytes() == b"\7" * 16 and os.listdir(folder) == []


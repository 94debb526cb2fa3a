"""The clang front end as a learner meets it: errors at kernel.cu:line, what NVRTC would reject
reported as such, the exit-3 message when `kata setup` has not run, the front end chosen, and
findings in inlined header code shown at the learner's line."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from harness.emulator import Emulator
from harness.emulator.ptx import load_ptx
from harness.frontends import clang, interface, nvrtc

GOOD = 'extern "C" __global__ void k(float* o, int n)\n{\n    if (threadIdx.x < n) o[threadIdx.x] = 1.0f;\n}\n'


def test_error_at_the_learners_line(clang_folder):
    res = clang.compile(GOOD.replace("1.0f;", "1.0f; undefined_name();"), "kernel.cu", use_cache=False)
    assert not res.ok and res.frontend == "clang"
    first = res.errors[0]
    assert (first.file, first.line) == ("kernel.cu", 3)
    assert "undefined_name" in first.message and "undefined_name();" in first.source_line


@pytest.mark.parametrize("body, line, needle", [
    ("#include <cmath>\n" + GOOD, 1, "#include <cmath>: a host header"),
    (GOOD.replace("1.0f", "INFINITY"), 3, "INFINITY comes from the host header <math.h>"),
    (GOOD.replace("1.0f", "std::sqrt(2.0f)"), 3, "std::sqrt: NVRTC"),
    (GOOD.replace("1.0f", "(float)M_PI"), 3, "M_PI is a host compiler's constant"),
])
def test_what_nvrtc_rejects_is_reported_as_such(clang_folder, body, line, needle):
    res = clang.compile(body, "kernel.cu", use_cache=False)
    assert not res.ok
    assert (res.errors[0].line, needle in res.errors[0].message) == (line, True), res.errors


def test_portable_twin_compiles(clang_folder):
    # the NVRTC spellings of the same things: no false alarm (names in comments and strings too)
    body = ('#include <math_constants.h>\n#include <cuda/std/limits>\n// INFINITY, std::max\n'
            + GOOD.replace("1.0f", "fmaxf(CUDART_INF_F, cuda::std::numeric_limits<float>::max())"))
    res = clang.compile(body, "kernel.cu", use_cache=False)
    assert res.ok, res.errors


def test_missing_folder_is_exit_3_naming_kata_setup(tmp_path, monkeypatch):
    from grader.cli import cli

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kernel.cu").write_text(GOOD)
    (ws / "launch.py").write_text("def launch(k, x, out, n):\n    pass\n")
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KATA_CLANG_CUDA", raising=False)
    monkeypatch.setenv("KATA_FRONTEND", "clang")
    if not clang.available():
        pytest.skip("the clang front end is not installed")
    res = CliRunner().invoke(cli, ["grade", str(ws), "--kata", "reduce", "--backend", "cpu"])
    assert res.exit_code == 3, res.output
    assert "CUDA folder" in res.output and "kata setup" in res.output


def test_the_front_end_is_chosen(monkeypatch):
    monkeypatch.setenv("KATA_FRONTEND", "clang")
    assert interface.choose("kernel.cu") == ("clang", "KATA_FRONTEND=clang")
    monkeypatch.delenv("KATA_FRONTEND")
    monkeypatch.setattr(nvrtc, "available", lambda: False)  # a Mac: no NVRTC wheel
    monkeypatch.setattr(clang, "available", lambda: True)
    assert interface.choose("kernel.cu") == ("clang", "nvrtc is not installed")
    monkeypatch.setenv("KATA_FRONTEND", "nvcc")
    with pytest.raises(nvrtc.CompilerUnavailable, match="choose one of"):
        interface.choose("kernel.cu")


HEADER_OOB = r'''#include <cuda_fp16.h>
extern "C" __global__ void k(const __half* x, float* out, int n)
{
    int i = threadIdx.x;
    out[i] = __half2float(x[i]) + __shfl_down_sync(0xffffffffu, 1.0f, 1);
}
'''


def test_inlined_header_code_is_shown_at_the_learners_line(clang_folder):
    """clang writes the inlining chain only in .loc comments; every instruction, header code
    included, is attributed to kernel.cu, and the out-of-bounds read of x lands on line 5."""
    res = clang.compile(HEADER_OOB, "kernel.cu", use_cache=False)
    assert res.ok, res.log
    assert "cuda_fp16.hpp" in res.ptx  # header code was inlined
    assert {i.file for i in load_ptx(res.ptx).code} == {"kernel.cu"}
    emu = Emulator(sanitize=True, counters=False)
    mod = emu.load(res.ptx, "kernel.cu")
    x, out = emu.alloc(2 * 16), emu.alloc(4 * 32)
    emu.write(x, np.ones(16, np.float16))
    found = emu.launch(mod, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[x, out, 16]).findings
    assert [(f.kind, f.file, f.line) for f in found][:1] == [("out-of-bounds", "kernel.cu", 5)]


def test_clang_chain_in_a_comment_is_walked():
    """The parser alone, on the shape clang writes: header line 92, inlined at kernel.cu:7."""
    ptx = ('.version 8.8\n.target sm_90\n.address_size 64\n.file 1 "/t/kernel.cu"\n.file 2 "/x/a b/vars.h"\n'
           '.visible .entry k()\n{\n\t.reg .b32 %r<2>;\n'
           '\t.loc 2 92 27 // /x/a b/vars.h:92:27 @[ /x/a b/other.h:3:1 @[ /t/kernel.cu:7:5 ] ]\n'
           '\tmov.u32 %r1, %tid.x;\n\t.loc 1 8 1\n\tret;\n}\n')
    code = load_ptx(ptx, "kernel.cu").code
    assert [(i.file, i.line) for i in code] == [("kernel.cu", 7), ("kernel.cu", 8)]


def test_windows_gets_a_clear_message_after_the_compile(tmp_path, monkeypatch, nvrtc_or_skip):
    from grader.cli import cli
    from grader.pipeline import compile as compile_stage

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kernel.cu").write_text(GOOD)
    (ws / "launch.py").write_text("def launch(k, x, out, n):\n    pass\n")
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(compile_stage, "_on_windows", lambda: True)
    res = CliRunner().invoke(cli, ["grade", str(ws), "--kata", "reduce", "--backend", "cpu"])
    assert res.exit_code == 3, res.output
    assert "cannot run it on Windows" in res.output and "WSL" in res.output
    (ws / "kernel.cu").write_text(GOOD.replace("1.0f;", "1.0f"))  # a compile error is still reported
    res = CliRunner().invoke(cli, ["grade", str(ws), "--kata", "reduce", "--backend", "cpu"])
    assert res.exit_code == 1 and "does not compile: kernel.cu:4" in res.output, res.output


def test_line_zero_keeps_the_line_before():
    """clang's `.loc 1 0 0` (code of no single line) must not show as kernel.cu:0."""
    ptx = ('.version 8.8\n.target sm_90\n.address_size 64\n.file 1 "/t/kernel.cu"\n'
           '.visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\t.loc 1 6 3\n\tmov.u32 %r1, %tid.x;\n'
           '\t.loc 1 0 0\n\tmov.u32 %r2, %r1;\n\tret;\n}\n')
    assert [i.line for i in load_ptx(ptx, "kernel.cu").code] == [6, 6, 6]


def test_without_ptxas_the_report_says_what_is_missing(clang_folder, monkeypatch):
    monkeypatch.setattr(clang, "_ptxas", lambda: None)  # a Mac: NVIDIA ships no ptxas for macOS
    res = clang.compile(GOOD, "kernel.cu", cubin=True, use_cache=False)
    assert res.ok and res.cubin is None and res.resources == {}
    assert any("ptxas" in n and "not reported" in n for n in res.notes)
    monkeypatch.setenv("KATA_FRONTEND", "clang")
    res = interface.compile(GOOD, "kernel.cu", cubin=True, use_cache=False)
    assert res.notes[0] == "compiled with clang (KATA_FRONTEND=clang)"


def test_a_clang_grade_says_clang_compiled_it_and_why(clang_folder, kata, tmp_path, monkeypatch):
    """Issue 28: the backend line of every grade names its compiler; a clang grade says why."""
    monkeypatch.setenv("KATA_FRONTEND", "clang")
    assert kata("start", "vector-add").exit_code == 0
    ws = tmp_path / "vector-add"
    (ws / "kernel.cu").write_text("not C\n")
    r = kata("grade", str(ws), "--backend", "cpu")
    assert "compiled by clang (KATA_FRONTEND=clang)" in r.output.splitlines()[-2]
    assert '"compiler": "clang (KATA_FRONTEND=clang)"' in kata("grade", str(ws), "--backend", "cpu", "--json").output

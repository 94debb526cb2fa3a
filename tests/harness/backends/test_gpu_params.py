"""The GPU backend's PTX parameter parser and name resolution, checked on the CPU with real NVRTC PTX."""
import numpy as np

from harness.frontends.nvrtc import compile as nvrtc_compile
from harness.backends.gpu import base_name, facts_of, parse_entries, resolve

SRC = r"""
extern "C" __global__ void reduce(const float* x, float* out, int n) { if (n) out[0] = x[0]; }
__global__ void scaled(double* y, long long m, unsigned short k, float a) { y[m] = a * k; }
"""


def test_entries_and_types_from_nvrtc_ptx():
    res = nvrtc_compile(SRC, "kernel.cu")
    assert res.ok, res.log
    entries = parse_entries(res.ptx)
    assert [p.type for p in entries["reduce"]] == ["u64", "u64", "u32"]
    mangled = resolve(entries, "scaled")
    assert mangled and mangled.startswith("_Z6scaled")
    assert [p.type for p in entries[mangled]] == ["u64", "u64", "u16", "f32"]


def test_base_name_and_ambiguity():
    assert base_name("_Z6reducePKfPfi") == "reduce" and base_name("reduce") == "reduce"
    assert resolve({"_Z1kPf": [], "_Z1kPd": []}, "k") is None  # overloads: the learner must pick one
    assert resolve({"k": []}, "missing") is None


def test_facts_fall_back_to_h200_values():
    f = facts_of({"name": b"NVIDIA H200", "multiProcessorCount": 132, "l2CacheSize": 62914560})
    assert f.name == "NVIDIA H200" and f.sm_count == 132 and f.max_shared_per_block_optin == 227 * 1024
    assert np.dtype(np.float32).itemsize == 4

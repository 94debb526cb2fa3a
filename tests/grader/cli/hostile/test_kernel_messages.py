"""Kernel mistakes whose compiler or emulator message used to leave a learner stuck, each with a
correct twin: too much static shared memory (the declaration, the limit, the fix), and a pointer
parameter whose type does not match the kata's dtype (not "check the index")."""
import pytest

from hostile_helpers import snapshot

SHARED = '''extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    __shared__ float tile[TILE];
    __shared__ float more[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    more[threadIdx.x] = 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) { float s = 0; for (int k = 0; k < blockDim.x; ++k) s += tile[k] + more[k]; atomicAdd(out, s); }
}
'''


@pytest.fixture
def on_cpu(monkeypatch):
    from grader.grading import pipeline

    monkeypatch.setattr(pipeline, "choose_backend", lambda requested: ("cpu", "--backend cpu"))


@pytest.mark.parametrize("tile, fails", [(16384, True), (256, False)])
def test_static_shared_memory_over_the_limit_names_the_declaration(kata, workspace, on_cpu, tile, fails):
    ws = workspace(kernel=SHARED.replace("TILE", str(tile)))
    before = snapshot(ws)
    code, out = kata("grade", ws, "--case", "n=5")
    if fails:
        assert code == 1, out
        assert "kernel.cu:3" in out and "tile[16384] at line 3: 65536 bytes" in out
        assert "at most 49152 bytes" in out and "extern __shared__ float tile[];" in out and "shared=" in out
        assert "0xc000" not in out and "ptxas info" not in out
        assert out.count("tile[16384] at line 3") == 1  # said once, not twice
    else:
        assert code == 0, out
    assert snapshot(ws) == before


TYPED = '''extern "C" __global__ void reduce(const TYPE* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, (float)x[i]);
}
'''


@pytest.mark.parametrize("ctype, fails", [("double", True), ("float", False)])
def test_a_pointer_of_the_wrong_float_type_is_a_type_mismatch(kata, workspace, on_cpu, ctype, fails):
    ws = workspace(kernel=TYPED.replace("TYPE", ctype))
    before = snapshot(ws)
    code, out = kata("grade", ws, "--case", "n=300")
    if fails:
        assert code == 1, out
        assert "kernel.cu:1 declares `const double* x`" in out and "does not match the kata's dtype" in out
        assert "declare it as a pointer to float" in out and "check the index" not in out
    else:
        assert code == 0, out
    assert snapshot(ws) == before

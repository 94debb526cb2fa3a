"""What a learner without a GPU reads about speed: a CPU grade's labelled H200 estimate with its
bound and line, and `kata bench DIR --backend cpu` for a kernel that only handles whole tiles."""
import json

from grader import catalog

REDUCE = catalog.load("reduce")

# Correct only when n is a multiple of 1024 (no tail loop): fails `kata grade` at n = 1, but the
# bench shape (2^28) and its scaled-down check (2^18) are multiples of 1024.
TILE_ONLY = r'''
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    float v = 0.0f;
    for (int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x); i < n; i += 4 * gridDim.x * blockDim.x) {
        const float4 q = *reinterpret_cast<const float4*>(x + i);
        v += (q.x + q.y) + (q.z + q.w);
    }
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}
'''


def test_a_cpu_grade_prints_a_labelled_estimate_with_its_bound_and_line(kata):
    r = kata("grade", str(REDUCE.solution_dir), "--kata", "reduce", "--backend", "cpu")
    assert r.exit_code == 0
    assert "estimate for the NVIDIA H200 (CPU performance model, not a measurement)" in r.output
    assert "bound: DRAM" in r.output and "kernel.cu:16:" in r.output and "to move it:" in r.output
    data = json.loads(kata("grade", str(REDUCE.solution_dir), "--kata", "reduce", "--backend", "cpu", "--json").output)
    (case,) = data["estimate"]["cases"]
    assert data["performance"] is None and case["resource"] == "dram" and case["seconds"] > 0


def test_bench_on_the_cpu_estimates_a_tile_multiple_only_kernel(kata, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kernel.cu").write_text(TILE_ONLY)
    (ws / "launch.py").write_text(
        "def launch(gpu, x, out, n):\n    gpu.memset(out, 0)\n"
        "    gpu.launch('reduce', grid=gpu.device.sm_count * 8, block=256, args=(x, out, n))\n")
    assert kata("grade", str(ws), "--kata", "reduce", "--backend", "cpu").exit_code == 1  # n = 1 is wrong
    r = kata("bench", str(ws), "--kata", "reduce", "--backend", "cpu", "--out", str(tmp_path / "out"))
    assert r.exit_code == 0, r.output
    assert "not a measurement" in r.output
    row = json.loads((tmp_path / "out" / "bench.json").read_text())["rows"][0]
    assert row["check"] == {"case": {"n": 262144}, "ok": True, "headline": row["check"]["headline"]}
    (case,) = row["cases"]
    assert case["estimated_s"] > 0 and case["bound"].startswith("DRAM")

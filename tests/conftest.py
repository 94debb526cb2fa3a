import sys
from pathlib import Path

import pytest

# The worker process imports the fake backend by module name; spawn hands it our sys.path.
sys.path.insert(0, str(Path(__file__).parent))
from fakes import FAKE  # noqa: E402  (after the path insert)

KERNEL = '''extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    if (threadIdx.x == 0 && n > 0) atomicAdd(out, x[0]);
}
'''


def write_submission(folder, modes=(), launch=None, kernel=KERNEL):
    folder.mkdir(parents=True, exist_ok=True)
    extra = "".join(f'extern "C" __global__ void mode_{m}() {{}}\n' for m in modes)
    (folder / "kernel.cu").write_text(kernel + extra)
    if launch is not None:
        (folder / "launch.py").write_text(launch)
    (folder / ".kata").write_text('kata = "reduce"\n')
    return folder


@pytest.fixture
def submission(tmp_path):
    def make(modes=(), launch=None, kernel=KERNEL):
        from grader.catalog import load

        plan = launch if launch is not None else load("reduce").file("launch.py").read_text()
        return write_submission(tmp_path / "ws", modes, plan, kernel)
    return make

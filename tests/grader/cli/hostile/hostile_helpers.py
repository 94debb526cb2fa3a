"""Helpers of the hostile-input corpus (a module of its own: `conftest` names collide across folders)."""
import hashlib
from pathlib import Path

KERNEL = '''extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    if (threadIdx.x == 0 && n > 0) atomicAdd(out, x[0]);
}
'''


def snapshot(folder: Path) -> dict:
    """Every file under the workspace, by relative path, with the sha256 of its bytes and its mode."""
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mode)
            for p in sorted(folder.rglob("*")) if p.is_file()}

"""lab/corpus_gpu.py (the real-code corpus through a Backend; on the H200 it checks that what the
emulator calls correct is correct on the hardware) runs end to end through the CPU backend."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_corpus_runs_through_the_cpu_backend():
    out = subprocess.run([sys.executable, "lab/corpus_gpu.py", "--backend", "cpu"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "cases passed on the cpu backend" in out.stdout

"""Which backend a grade runs on: --backend auto|gpu|cpu, or a BackendChoice a caller passes in
(the tests' numpy fake, through the real worker)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.errors import EnvironmentProblem, UsageError


@dataclass(frozen=True)
class BackendChoice:
    """Which backend a grade's worker builds, and why. name: "cpu", "gpu", or a Backend factory
    "module:function" that a caller passes in (the tests' numpy fake); flag: the `--backend ...`
    that a rerun command repeats ("" for auto and for a factory)."""

    name: str
    why: str
    flag: str = ""
    #: "gpu": a factory that plays the GPU, so the grade takes the GPU path (the tests' fake)
    acts_as: str = ""

    @property
    def label(self) -> str:
        """The report's backend: cpu, gpu, or the factory's module."""
        return self.name.split(":")[0]

    @property
    def on_gpu(self) -> bool:
        """Whether the grade takes the GPU path: timings, and the emulator borrowed for the sanitizer."""
        return (self.acts_as or self.name) == "gpu"


def choose_backend(requested: str | BackendChoice) -> BackendChoice:
    """The backend for --backend auto|gpu|cpu; a BackendChoice passed in is used as it is."""
    if isinstance(requested, BackendChoice):
        return requested
    if requested == "cpu":
        return BackendChoice("cpu", "--backend cpu", "--backend cpu")
    if requested not in ("auto", "gpu"):
        raise UsageError(f"--backend {requested!r}: choose auto, gpu or cpu")
    try:
        from harness.backends import gpu as _gpu

        available = _gpu.available()
    except Exception:
        available = False
    if requested == "gpu":
        if not available:
            raise EnvironmentProblem(
                "--backend gpu: CuPy sees no CUDA GPU on this machine",
                hint="pip install -e '.[gpu]' in your kata checkout on a machine with a GPU, or use --backend cpu",
            )
        return BackendChoice("gpu", "--backend gpu", "--backend gpu")
    if available:
        return BackendChoice("gpu", "auto: CuPy sees a CUDA GPU")
    return BackendChoice("cpu", "auto: no CUDA GPU visible to CuPy, so kata's CPU emulator runs the PTX")

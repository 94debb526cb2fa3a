#!/usr/bin/env bash
# Does `pip install kata` resolve to binary wheels on macOS (arm64, x86_64), Linux and Windows?
#   bash lab/check_platform_resolution.sh [PYTHON_VERSION ...]   (default: 3.10 3.12 3.13)
# pip evaluates environment markers (sys_platform) for the machine it runs on, even with
# --platform, so uv resolves the dependency set for each target platform first (markers right),
# then `pip install --dry-run --report --only-binary=:all: --platform TAG --no-deps` checks that
# every pinned package has a wheel for that platform. Needs network access to PyPI; uv from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q uv "pip>=25"  # older pips refuse --platform without --target
versions=${*:-3.10 3.12 3.13}
status=0
for py in $versions; do
  for pair in "aarch64-apple-darwin macosx_13_0_arm64" "x86_64-apple-darwin macosx_13_0_x86_64" \
              "x86_64-manylinux_2_28 manylinux_2_28_x86_64" "aarch64-manylinux_2_28 manylinux_2_28_aarch64" \
              "x86_64-pc-windows-msvc win_amd64"; do
    set -- $pair
    req="$work/req-$1-$py.txt"
    if ! "$work/venv/bin/uv" pip compile -q --python-platform "$1" --python-version "$py" --no-header \
         --no-annotate pyproject.toml -o "$req" 2>"$work/err"; then
      echo "python $py $2: uv could not resolve: $(tail -1 "$work/err")"; status=1; continue
    fi
    # platform-specific wheels need their manylinux/macos tags spelled out for pip
    extra=(); case "$2" in manylinux_2_28_*) extra=(--platform "manylinux2014_${2#manylinux_2_28_}");; esac
    if "$work/venv/bin/pip" install -q --dry-run --ignore-installed --no-deps --only-binary=:all: \
         --platform "$2" "${extra[@]}" --python-version "$py" --report "$work/rep.json" -r "$req" 2>"$work/err"; then
      echo "python $py $2: OK, $(grep -c . "$req") wheels: $(tr '\n' ' ' < "$req")"
    else
      echo "python $py $2: NO WHEEL: $(grep ERROR "$work/err" | head -1)"; status=1
    fi
  done
done
rm -rf "$work"
exit $status

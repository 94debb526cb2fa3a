#!/usr/bin/env bash
# Issue 24's limits on the H200 machine (root): the Triton and numba kernel.py process's jail
# (harness/sandbox/jail.py): what the machine allows, a GPU grade of each solution in it, and the
# jail's exploit tests. Run from the repo root with JOBOUT set. Expected run time: ~150 s.
set -uo pipefail
out=${JOBOUT:?set JOBOUT}
mkdir -p "$out"
source lab/device_env.sh
export KATA_HOME=$(mktemp -d)/kata-home PYTHONUNBUFFERED=1
{ id; uname -r; nproc; cat /proc/sys/user/max_user_namespaces; } >"$out/machine.txt" 2>&1
timeout 20 python3 -c "from harness.sandbox import jail; print('jail missing:', jail.probe())" >"$out/probe.txt" 2>&1
for lang in triton numba; do  # a GPU grade of each solution, in the jail: must pass as before
  t0=$(date +%s.%N)
  timeout 120 python3 -m grader grade "solutions/reduce/$lang" --kata reduce --backend gpu --json \
    >"$out/grade-$lang.json" 2>"$out/grade-$lang.err" || true
  echo "$lang $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s" >>"$out/walls.txt"
done
timeout 200 python3 -m pytest -q tests/harness/sandbox/test_jail.py \
  tests/harness/frontends/test_kernel_jail_exploits.py >"$out/jail_tests.txt" 2>&1 || true
python3 - "$out" <<'PY' || true
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).glob("grade-*.json")):
    try:
        r = json.loads(p.read_text())
        print(p.stem, r.get("verdict"), r.get("headline", "")[:120], [n for n in r.get("notes", []) if "kernel.py" in n])
    except Exception as exc:
        print(p.stem, "unreadable:", exc)
PY
cat "$out/probe.txt" "$out/walls.txt"; tail -3 "$out/jail_tests.txt"

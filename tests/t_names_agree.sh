#!/usr/bin/env bash
# t_names_agree: the timeline and the report name every process the same way
# (one rule, model/proc_names.h: EXEC > ATTACH > FORK, argv from that record).
# A traced shell forks children that exec, renames its main thread with
# prctl(PR_SET_NAME) after exec (a NAME record for tid == pid, which must not
# rename the process), and forks one that never execs. For every pid the
# export's process_name ("comm: argv" or "comm") and the report's processes
# (comm, args) agree, and the renamed process keeps its exec name.
source "$(dirname "$0")/lib.sh"
need_root
cat > "$TMP/rename.py" <<'PYEOF'
import ctypes, os, sys
ctypes.CDLL(None).prctl(15, b"renamed-main", 0, 0, 0)
open(sys.argv[1], "rb").read()
if os.fork() == 0:
    open(sys.argv[1], "rb").read()
    os._exit(0)
os.wait()
PYEOF
head -c 64K /dev/urandom > "$TMP/data"
PY=$(command -v python3)
"$GPUIO" trace -q -o "$TMP/t.json" -- /bin/sh -c '"$1" "$2" "$3"; cat "$3" > /dev/null' sh \
  "$(readlink -f "$PY")" "$TMP/rename.py" "$TMP/data" 2> "$TMP/err" || { cat "$TMP/err"; fail "trace failed"; }
"$GPUIO" report --json "$TMP/t.gpuio" > "$TMP/r.json" || fail "report failed"
python3 - "$TMP/t.json" "$TMP/r.json" <<'PYEOF' || fail "the timeline and the report name processes differently"
import json, sys
ev = json.load(open(sys.argv[1])); rep = json.load(open(sys.argv[2]))
exp = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name" and e["pid"] < 0x20000000}
rp = {p["pid"]: (p["comm"], p["args"]) for p in rep["processes"]}
bad = 0
for pid, (comm, args) in rp.items():
    want = comm + (": " + args if args else "")
    got = exp.get(pid)
    # the export cuts "comm: argv" at 200 bytes; the report's args at 199
    if got is None or not (got == want or (len(got) >= 190 and want.startswith(got[:190]))):
        print(f"FAIL pid {pid}: timeline {got!r}, report {want!r}"); bad += 1
renamed = [c for c, a in rp.values() if "rename.py" in a]
if not renamed or any(c == "renamed-main" for c in renamed):
    print(f"FAIL the renamed main thread renamed its process: {renamed}"); bad += 1
print(f"{len(rp)} processes, {bad} disagreements; python named {renamed}")
sys.exit(1 if bad else 0)
PYEOF
echo "PASS t_names_agree"

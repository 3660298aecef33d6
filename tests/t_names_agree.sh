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
pycheck procs.names_agree "$TMP/t.json" "$TMP/r.json" ||
  fail "the timeline and the report name processes differently"
echo "PASS t_names_agree"

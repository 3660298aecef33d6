#!/usr/bin/env bash
# t_export_stacks: Python stacks on the timeline (gpuio trace --stacks
# --sample-hz 499). tests/progs/stack_truth.py reads a file through one
# function, touches an evicted mapping through another, sleeps in a third
# and computes in a fourth, and prints the file:line of each statement from
# its own code objects. Traced under Debian's /usr/bin/python3.11 and every
# /root/.pyenv/versions/3.1[0-3].* interpreter present (those absent are
# named and not run), each export is held against it
# (tests/checks/stacks_truth.py):
#  - JSON: every pread64 of the data file carries site = the read's
#    "FILE:LINE FUNCTION" and a stack that begins there; every page_fault of
#    the mapping the touch line's; each 20 ms sleep's state the nap line's;
#    the trace info counts the slices with a stack;
#  - .pftrace, through Perfetto's importer: cpu_profile_stack_sample's most
#    common innermost function is the busy one, at its line, with 0.8 to 1.1
#    times 499 Hz x the CPU time the program measured in it, on the
#    program's thread; the SQL views
#    gpuio_cpu_functions and gpuio_call_sites say the same;
#  - both exports import with no error, the importer's CPU samples = the
#    file's = what the trace info says was written (tp_check).
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_SRC/tests/progs/stack_truth.py"
SQL="$GPUIO_SRC/user/export/sql/gpuio.sql"
HZ=499
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11 (Debian's python3.11)"
pys=(/usr/bin/python3.11)
for minor in 10 11 12 13; do
  # || true: with pipefail a machine without pyenv would end the test here
  py=$(ls -d /root/.pyenv/versions/3.$minor.*/bin/python3.$minor 2>/dev/null | sort -V | tail -1 || true)
  if [ -n "$py" ] && [ -x "$py" ]; then
    pys+=("$py")
  else
    echo "note: no /root/.pyenv/versions/3.$minor.*/bin/python3.$minor: Python 3.$minor from pyenv not run"
  fi
done
TP=$(tp_path) || { TP=; tp_note "the CPU samples and the SQL views"; }

# the data file and the mapped one, written to the disk (clean pages: the
# program's DONTNEED evicts the mapped one, so its touches fault)
dd if=/dev/urandom of="$TMP/data.bin" bs=4096 count=64 conv=fsync status=none
dd if=/dev/urandom of="$TMP/map.bin" bs=1M count=1 conv=fsync status=none

# tpq TRACE 'SQL' OUT: trace_processor on TRACE with gpuio.sql, the query's result as CSV
tpq() {
  { cat "$SQL"; printf '%s\n' "$2"; } > "$TMP/q.sql"
  "$TP" -q "$TMP/q.sql" "$1" > "$3" 2> "$TMP/tp.err" || { cat "$TMP/tp.err"; fail "trace_processor on $1"; }
}

# Each interpreter is run whatever the one before did; the test fails at the
# end naming those whose exports differ from the program.
n=0
bad=()
for py in "${pys[@]}"; do
  n=$((n + 1))
  d="$TMP/py$n"
  mkdir -p "$d"
  "$GPUIO" trace -q --stacks --sample-hz $HZ --capture "$d/c.gpuio" -o "$d/t.json" -- \
    "$py" "$PROG" "$TMP/data.bin" "$TMP/map.bin" > "$d/truth.json" 2> "$d/trace.err" ||
    { cat "$d/trace.err"; fail "gpuio trace -- $py stack_truth.py failed"; }
  ver=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["python"])' "$d/truth.json") ||
    fail "$py: stack_truth.py printed no truth"
  pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$d/truth.json")
  echo "== $py (Python $ver)"
  "$GPUIO" convert "$d/c.gpuio" -o "$d/t.pftrace" 2> "$d/conv.err" ||
    { cat "$d/conv.err"; fail "convert to .pftrace"; }
  check_struct "$d/t.json"
  check_struct "$d/t.pftrace"
  pycheck stacks_truth.json_sites "$d/truth.json" "$d/t.json" ||
    bad+=("Python $ver: the JSON's stacks differ from the program's lines")
  [ -n "$TP" ] || continue
  tpq "$d/t.pftrace" "SELECT f.name AS function,
      CASE WHEN m.name GLOB '/<*' THEN SUBSTR(m.name, 2) ELSE m.name END AS file,
      f.rel_pc AS line, t.tid
    FROM cpu_profile_stack_sample s
    JOIN stack_profile_callsite c ON c.id = s.callsite_id
    JOIN stack_profile_frame f ON f.id = c.frame_id
    JOIN stack_profile_mapping m ON m.id = f.mapping
    JOIN thread t USING (utid) JOIN process p ON p.upid = t.upid
    WHERE p.pid = $pid;" "$d/samples.csv"
  tpq "$d/t.pftrace" "SELECT function, file, self_samples, total_samples FROM gpuio_cpu_functions
    WHERE pid = $pid ORDER BY self_samples DESC;" "$d/functions.csv"
  tpq "$d/t.pftrace" "SELECT site, path, calls, bytes FROM gpuio_call_sites
    WHERE path = '$TMP/data.bin';" "$d/sites.csv"
  pycheck stacks_truth.pftrace_samples "$d/truth.json" $HZ "$d/samples.csv" "$d/functions.csv" \
    "$d/sites.csv" || bad+=("Python $ver: the .pftrace's samples differ from the program's work")
done
[ ${#bad[@]} -eq 0 ] || fail "$(printf '%s; ' "${bad[@]}")"
echo "PASS: Python stacks in both exports at the program's own lines, ${#pys[@]} interpreters"

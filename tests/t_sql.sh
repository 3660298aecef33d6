#!/usr/bin/env bash
# t_sql: the PerfettoSQL views (user/export/sql/gpuio.sql, docs/sql.md)
# loaded into Perfetto's trace_processor_shell, against ground truth:
#  - tests/progs/known_io traced for real (.pftrace): gpuio_file_calls holds
#    each file's calls with the counts, bytes and offsets the program makes,
#    w.dat's 16 page-cache misses; gpuio_block_requests: w.dat's 64 KiB of
#    missed pages and its 8 O_DIRECT 4 KiB reads read from the device, each
#    bound to the call that caused it, the 64 KiB written bound to the fsync,
#    and no more block bytes than the device's /sys/block/DEV/stat counted
#    meanwhile; gpuio_thread_states: each O_DIRECT pread64 asleep inside
#    itself (blocked_kind file_io);
#  - the three queries of docs/sql.md, run as the page prints them: files
#    and block requests on known_io's trace, GPU gaps over 10 ms on
#    gen_capture gpuwait (its five 20 ms gaps, the worker's 1 MiB read in
#    the second);
#  - gen_capture gpu: gpuio_gpu_gaps and gpuio_gpu_stream_gaps equal the
#    gaps of the union of the generated kernels, copies and memsets, to the
#    ns (overlapping lanes, touching activities); a manifest whose copy
#    ends 1 us later fails that check;
#  - gen_capture faults: gpuio_page_faults as generated;
#  - the saved H200 PyTorch capture (tests/gpu/runs/): gpuio_gpu_gaps per
#    (pid, GPU) has gpuio report's gap count and idle ns, its largest gaps
#    are the report's largest_gaps;
#  - the file runs twice in one session (the UI's query page), and loads as
#    the module gpuio.gpuio (--add-sql-package).
# Without trace_processor_shell (a clone without ../shared) the test skips,
# saying so.
source "$(dirname "$0")/lib.sh"
need_root
SQL="$GPUIO_SRC/user/export/sql/gpuio.sql"
GEN="$GPUIO_TESTS/gen_capture"
[ -f "$SQL" ] || fail "missing $SQL"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x "$GPUIO_TESTS/known_io" ] || fail "missing $GPUIO_TESTS/known_io (run: make test-progs)"
for v in gpuio_file_calls gpuio_page_faults gpuio_block_requests gpuio_gpu_activities gpuio_gpu_gaps \
         gpuio_gpu_stream_gaps gpuio_thread_states; do
  grep -q "^CREATE OR REPLACE PERFETTO VIEW $v(" "$SQL" || fail "gpuio.sql defines no view $v"
done
# the docs' three queries, exactly as docs/sql.md prints them
mkdir -p "$TMP/doc"
pycheck sql_truth.doc_queries "$GPUIO_SRC/docs/sql.md" "$TMP/doc" || fail "docs/sql.md: its three queries"
TP=$(tp_path) || skip "trace_processor_shell not found (../shared/tools/trace_processor_shell; set TRACE_PROCESSOR=PATH): the views cannot be loaded"

# q TRACE QUERY_FILE OUT: gpuio.sql, then the query, the last result as CSV in OUT
q() {
  cat "$SQL" "$2" > "$TMP/run.sql"
  "$TP" -q "$TMP/run.sql" "$1" > "$3" 2> "$TMP/tp.err" || { cat "$TMP/tp.err"; fail "trace_processor: $2 on $1"; }
}
# qs TRACE 'SQL' OUT: the same with the query given inline
qs() { printf '%s\n' "$2" > "$TMP/inline.sql"; q "$1" "$TMP/inline.sql" "$3"; }

# ---- known_io, traced for real ----
D="$TMP/k"
mkdir -p "$D"
# the whole disk under $D (a partition's requests are its disk's), for its counters
disk=-
if mm=$(stat -c '%Hd:%Ld' "$D" 2>/dev/null) && [ -e "/sys/dev/block/$mm" ]; then
  sys=$(readlink -f "/sys/dev/block/$mm")
  [ -e "$sys/partition" ] && sys=$(dirname "$sys")
  disk=$(basename "$sys")
fi
dstat() { if [ "$disk" = - ]; then echo 0 0; else awk '{printf "%.0f %.0f\n", $3 * 512, $7 * 512}' "/sys/block/$disk/stat"; fi; }
read -r r0 w0 < <(dstat)
KNOWN_IO_SWITCHES="$TMP/k.switches" \
  "$GPUIO" trace -q -o "$TMP/k.pftrace" -- "$GPUIO_TESTS/known_io" "$D" 2> "$TMP/k.err" ||
  { cat "$TMP/k.err"; fail "gpuio trace -- known_io failed"; }
read -r r1 w1 < <(dstat)
if [ "$disk" = - ]; then echo - > "$TMP/diskstat"; else echo "$disk $((r1 - r0)) $((w1 - w0))" > "$TMP/diskstat"; fi
tp_check "$TMP/k.pftrace"
qs "$TMP/k.pftrace" "SELECT id, ts, end_ts, call, path, bytes, offset, cache_miss_pages, tid, pid, thread_name,
  block_requests, block_bytes FROM gpuio_file_calls;" "$TMP/k.calls"
qs "$TMP/k.pftrace" "SELECT id, dev, op, bytes, path, call_id, call, call_path, call_thread_name
  FROM gpuio_block_requests;" "$TMP/k.blocks"
qs "$TMP/k.pftrace" "SELECT id, ts, state, blocked, blocked_kind, call_id, call, call_path
  FROM gpuio_thread_states WHERE call_id IS NOT NULL;" "$TMP/k.states"
pycheck sql_truth.known_io "$D" "$TMP/k.calls" "$TMP/k.blocks" "$TMP/k.states" "$TMP/diskstat" \
  "$TMP/k.switches" ||
  fail "the views differ from what known_io did"
q "$TMP/k.pftrace" "$TMP/doc/files.sql" "$TMP/k.q1"
q "$TMP/k.pftrace" "$TMP/doc/block.sql" "$TMP/k.q2"
pycheck sql_truth.doc_known_io "$D" "$TMP/k.q1" "$TMP/k.q2" || fail "docs/sql.md's queries 1 and 2 on known_io"

# loaded twice in one session (the UI's query page), and as a module
cat "$SQL" > "$TMP/twice.sql"
printf '%s\n' "SELECT COUNT(*) AS n FROM gpuio_file_calls WHERE path = '$D/w.dat';" >> "$TMP/twice.sql"
q "$TMP/k.pftrace" "$TMP/twice.sql" "$TMP/twice.out"
grep -qx 64 "$TMP/twice.out" || { cat "$TMP/twice.out"; fail "gpuio.sql run twice: w.dat's 64 calls (its fadvise too)"; }
mkdir -p "$TMP/pkg/gpuio"
cp "$SQL" "$TMP/pkg/gpuio/gpuio.sql"
printf '%s\n' "INCLUDE PERFETTO MODULE gpuio.gpuio;" \
  "SELECT COUNT(*) AS n FROM gpuio_block_requests WHERE path = '$D/w.dat' AND op = 'read';" > "$TMP/mod.sql"
"$TP" --add-sql-package "$TMP/pkg/gpuio" -q "$TMP/mod.sql" "$TMP/k.pftrace" > "$TMP/mod.out" 2> "$TMP/tp.err" ||
  { cat "$TMP/tp.err"; fail "INCLUDE PERFETTO MODULE gpuio.gpuio"; }
[ "$(tail -n1 "$TMP/mod.out")" -ge 9 ] || { cat "$TMP/mod.out"; fail "as a module: w.dat's read requests"; }
echo "known_io: views as the program did; the file loads twice and as module gpuio.gpuio"

# ---- GPU gaps: gen_capture gpu, exact ----
"$GEN" gpu "$TMP/g.gpuio" > "$TMP/g.manifest" || fail "gen_capture gpu failed"
"$GPUIO" convert -q "$TMP/g.gpuio" -o "$TMP/g.pftrace" || fail "convert gpu"
# (trace_processor's CSV leaves a '"' in a value as it is: doubled here, as CSV has it)
cols="ts, dur, end_ts, gpu, device, pid, REPLACE(prev_name, '\"', '\"\"') AS prev_name,
  REPLACE(next_name, '\"', '\"\"') AS next_name"
qs "$TMP/g.pftrace" "SELECT $cols FROM gpuio_gpu_gaps;" "$TMP/g.gaps"
qs "$TMP/g.pftrace" "SELECT $cols, stream FROM gpuio_gpu_stream_gaps;" "$TMP/g.sgaps"
pycheck sql_truth.gen_gpu_gaps "$TMP/g.manifest" "$TMP/g.gaps" "$TMP/g.sgaps" ||
  fail "GPU gaps differ from the generated activities"
# the check can fail: the same views against a manifest whose HtoD copy ends 1 µs later
python3 - "$TMP/g.manifest" "$TMP/bad.manifest" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
k = next(s for s in m["slices"] if s["cat"] == "gpu" and bytes.fromhex(s["name_hex"]) == b"memcpy HtoD")
k["dur_ns"] += 1000
json.dump(m, open(sys.argv[2], "w"))
EOF
pycheck sql_truth.gen_gpu_gaps "$TMP/bad.manifest" "$TMP/g.gaps" "$TMP/g.sgaps" > "$TMP/bad.out" &&
  { cat "$TMP/bad.out"; fail "the gap check accepts gaps of a copy that ends 1 us later"; }
grep -q '^FAIL ' "$TMP/bad.out" || { cat "$TMP/bad.out"; fail "bad manifest: no failed check"; }

# ---- docs' query 3 on gen_capture gpuwait ----
"$GEN" gpuwait "$TMP/w.gpuio" > "$TMP/w.manifest" || fail "gen_capture gpuwait failed"
"$GPUIO" convert -q "$TMP/w.gpuio" -o "$TMP/w.pftrace" || fail "convert gpuwait"
q "$TMP/w.pftrace" "$TMP/doc/gaps.sql" "$TMP/w.q3"
pycheck sql_truth.doc_gaps_gpuwait "$TMP/w.manifest" "$TMP/w.q3" || fail "docs/sql.md's query 3 on gpuwait"
# the report's answer drawn by the export: gpuio_loop_steps, gpuio_gap_causes
qs "$TMP/w.pftrace" "SELECT loop, step, tid, ts, dur, wait_us, rest_us, cause, on_cpu_us, waiting_for_data_us FROM gpuio_loop_steps ORDER BY ts;" "$TMP/w.steps"
qs "$TMP/w.pftrace" "SELECT ts, dur, pid, launcher_tid, source, cause, us FROM gpuio_gap_causes ORDER BY ts, source, cause;" "$TMP/w.causes"
pycheck sql_truth.gen_findings "$TMP/w.manifest" "$TMP/w.steps" "$TMP/w.causes" ||
  fail "gpuio_loop_steps / gpuio_gap_causes differ from the generator"

# ---- page faults: gen_capture faults ----
"$GEN" faults "$TMP/f.gpuio" > "$TMP/f.manifest" || fail "gen_capture faults failed"
"$GPUIO" convert -q "$TMP/f.gpuio" -o "$TMP/f.pftrace" || fail "convert faults"
qs "$TMP/f.pftrace" "SELECT * FROM gpuio_page_faults;" "$TMP/f.rows"
pycheck sql_truth.gen_faults "$TMP/f.manifest" "$TMP/f.rows" || fail "gpuio_page_faults differs from the generator"

# ---- a real GPU capture: the views' gaps are gpuio report's ----
H200=$(ls "$GPUIO_SRC"/tests/gpu/runs/*/train-bpf.gpuio.gz 2>/dev/null | head -n1 || true)
if [ -n "$H200" ]; then
  gzip -dc "$H200" > "$TMP/h.gpuio"
  "$GPUIO" convert -q "$TMP/h.gpuio" -o "$TMP/h.pftrace" || fail "convert $H200"
  "$GPUIO" report --json "$TMP/h.gpuio" > "$TMP/h.report" || fail "report $H200"
  qs "$TMP/h.pftrace" "SELECT pid, device, COUNT(*) AS gaps, SUM(dur) AS idle_ns FROM gpuio_gpu_gaps
    GROUP BY gpu_track_id, pid;" "$TMP/h.gaps"
  qs "$TMP/h.pftrace" "SELECT pid, device, ts, dur FROM gpuio_gpu_gaps ORDER BY dur DESC, ts LIMIT 10;" "$TMP/h.top"
  pycheck sql_truth.report_gaps "$TMP/h.report" "$TMP/h.gaps" "$TMP/h.top" ||
    fail "gpuio_gpu_gaps differs from gpuio report on $H200"
  q "$TMP/h.pftrace" "$TMP/doc/gaps.sql" "$TMP/h.q3"
  [ "$(grep -c '^"GPU 0"' "$TMP/h.q3")" -eq 8 ] || { cat "$TMP/h.q3"; fail "query 3 on $H200: not 8 gaps"; }
else
  echo "note: no saved GPU capture under tests/gpu/runs: the report cross-check not run"
fi
echo "PASS t_sql: the views hold what the programs did and what the generator wrote"

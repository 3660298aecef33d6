#!/usr/bin/env bash
# t_attach: attach to processes already in the middle of their I/O.
#
# build/tests/attach_reader opens its file (relative to its own cwd) and a
# log, then preads 512 bytes at offset seq*512 every millisecond, logging
# "seq t_before t_after offset bytes" after each read. Ground truth is that
# log. Checks:
#   A. attach -p PID -d 2s mid-run: the trace's reads of the file are a
#      contiguous run of the logged sequence, none from before gpuio started,
#      all reads logged in the first 1.5 s after "tracing" was printed
#      present, each inside its logged [t_before, t_after]; the file (and
#      the log) were opened before the attach and are named by absolute path;
#   B. the target exits during the trace: gpuio ends by itself ("all traced
#      processes exited"), exit 0, valid JSON, capture_complete, and the
#      trace has the reads up to the last one the target did;
#   C. attach to a shell whose child (started before the attach) does the
#      reads: the child is traced too.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/attach_reader"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

mkdir -p "$TMP/data" "$TMP/cwd"
head -c $((8 << 20)) /dev/urandom >"$TMP/data/input.bin"

# ---- A: attach mid-run -------------------------------------------------
spawn -C "$TMP/cwd" reader "$PROG" ../data/input.bin "$TMP/a.log" 1000 0
RPID=$SPAWNED
wait_lines "$TMP/a.log" 100
N_BEFORE=$(wc -l <"$TMP/a.log")
spawn -e "$TMP/a.err" gpuio "$GPUIO" trace -p "$RPID" -d 2s -o "$TMP/a.json"
GPID=$SPAWNED
# CLOCK_MONOTONIC when gpuio said it is tracing (python: time.monotonic_ns)
T_TRACING=$(pycheck reader_log.wait_mono "$TMP/a.err" tracing)
wait "$GPID" || { cat "$TMP/a.err"; fail "A: gpuio trace -p exited non-zero"; }
cat "$TMP/a.err"
[ "$T_TRACING" != 0 ] || fail "A: gpuio never printed 'tracing ...'"
proc_stop "$RPID"
check_struct "$TMP/a.json"

pycheck reader_log.attach_mid_run "$TMP/a.json" "$TMP/a.log" "$TMP/data/input.bin" "$RPID" "$N_BEFORE" "$T_TRACING" ||
  fail "A: attach mid-run"

# ---- B: the target exits while traced ----------------------------------
# 300 reads 5 ms apart: ~1.4 s left after the first 20 for gpuio to attach
# (2 ms apart left 0.56 s, which a loaded machine's attach overran)
spawn -C "$TMP/cwd" reader "$PROG" ../data/input.bin "$TMP/b.log" 5000 300
RPID=$SPAWNED
wait_lines "$TMP/b.log" 20
SECONDS=0
timeout 20 "$GPUIO" trace -p "$RPID" -d 15s -o "$TMP/b.json" 2>"$TMP/b.err" \
  || { cat "$TMP/b.err"; fail "B: gpuio trace -p exited non-zero when the target exited"; }
cat "$TMP/b.err"
[ "$SECONDS" -lt 10 ] || fail "B: gpuio did not end when its target exited (${SECONDS}s)"
grep -q "all traced processes exited" "$TMP/b.err" || fail "B: no 'all traced processes exited' message"
grep -q ") for 15s; Ctrl-C to stop" "$TMP/b.err" || fail "B: the tracing line does not say -d 15s"
wait "$RPID" || fail "B: attach_reader failed"
[ "$(wc -l <"$TMP/b.log")" -eq 300 ] || fail "B: attach_reader did not do its 300 reads"
[ -s "$TMP/b.gpuio" ] || fail "B: no capture $TMP/b.gpuio"
check_struct "$TMP/b.json"
pycheck reader_log.attach_target_exit "$TMP/b.json" "$TMP/data/input.bin" "$RPID" ||
  fail "B: target exiting during the trace"

# ---- C: a child that existed before the attach is traced ----------------
spawn -C "$TMP/cwd" shell sh -c '"$0" ../data/input.bin "$1" 2000 0 & echo $! >"$2"; wait' "$PROG" "$TMP/c.log" "$TMP/c.pid"
SPID=$SPAWNED
wait_lines "$TMP/c.log" 20
CPID=$(cat "$TMP/c.pid")
proc_reg "$CPID" "the shell's reader"
"$GPUIO" trace -p "$SPID" -d 1s -o "$TMP/c.json" 2>"$TMP/c.err" || { cat "$TMP/c.err"; fail "C: gpuio trace -p exited non-zero"; }
check_struct "$TMP/c.json"
pycheck reader_log.attach_child "$TMP/c.json" "$TMP/data/input.bin" "$CPID" ||
  fail "C: a pre-existing child of the target is not traced"
echo "PASS: attach traces exactly the I/O after the attach, names pre-opened files, ends when targets exit"

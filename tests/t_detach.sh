#!/usr/bin/env bash
# t_detach: the per-syscall VFS mode's links (a tracepoint pair per decoded
# call; closing each waits for a grace period in the kernel) are held by a
# child, gpuio-detach, from the attach on, so that however gpuio ends they
# are closed without gpuio waiting and without any left behind:
#   - while gpuio traces, one new gpuio-detach holds its links (as many as
#     gpuio itself, >= 16);
#   - gpuio killed with SIGKILL: the child closes every link and exits;
#   - a gpuio started at once after the kill traces: every pread logged by
#     build/tests/attach_reader is in its trace;
#   - Ctrl-C ends a trace the same way (its child exits too);
#   - gpuio killed while a traced process keeps reading: the links its
#     child still holds trace no one (the ring's producer position, read
#     through the map itself, grew while gpuio traced and stays put after;
#     the child sets the programs' tracing_over, which a killed gpuio
#     cannot).
# The times (kill to gpuio gone, to the links closed) are printed, not checked.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/attach_reader"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

links_of() { ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'anon_inode:bpf_link' || true; }
# comm(1) wants the order sort(1) gives, not a numeric one (pids of 4 and 5 digits)
# || true: none at all is an answer (pgrep exits 1), not the end of the test
reapers() { pgrep -x gpuio-detach | sort || true; }
now_ms() { date +%s%3N; }
head -c $((1 << 20)) /dev/urandom > "$TMP/data.bin"

if ! "$GPUIO" trace -q --vfs-mode=per_syscall --no-export --capture "$TMP/p.gpuio" -- true \
     2> "$TMP/probe.err"; then
  grep -q "not available on this kernel" "$TMP/probe.err" &&
    skip "the per-syscall mode is refused here: $(tail -1 "$TMP/probe.err")"
  cat "$TMP/probe.err"; fail "a per-syscall trace of true failed"
fi

# ---- SIGKILL mid-trace
spawn -s KILL idle sleep 600
IDLE=$SPAWNED
before=$(reapers)
spawn -s KILL -e "$TMP/k.err" gpuio "$GPUIO" trace --vfs-mode=per_syscall -p "$IDLE" -o "$TMP/k.json"
GPID=$SPAWNED
wait_line -m "gpuio never started tracing" "tracing" "$TMP/k.err"
R=$(comm -13 <(echo "$before") <(reapers))
[ "$(echo "$R" | grep -c .)" = 1 ] || fail "want one new gpuio-detach while tracing, found: '$R'"
held=$(links_of "$R") own=$(links_of "$GPID")
echo "gpuio $GPID holds $own links, its gpuio-detach $R holds $held"
[ "$held" -ge 16 ] || fail "gpuio-detach holds $held links, want the per-syscall mode's (>= 16)"
[ "$held" -le "$own" ] || fail "gpuio-detach holds $held links, more than gpuio's $own"
t0=$(now_ms)
kill -KILL "$GPID"
wait "$GPID" 2>/dev/null || true
proc_unreg "$GPID"
t1=$(now_ms)
left=$(links_of "$R")
wait_for -t 120 -i 0.1 "gpuio-detach $R to close its links and exit" _gone "$R"
t2=$(now_ms)
echo "SIGKILL: gpuio gone after $((t1 - t0)) ms (its child still held $left links), the links closed after $((t2 - t0)) ms"

# ---- a gpuio right after: it traces every read
spawn -s KILL -e "$TMP/n.err" gpuio2 "$GPUIO" trace -v --vfs-mode=per_syscall -o "$TMP/n.json" -- \
  "$PROG" "$TMP/data.bin" "$TMP/n.log" 1000 300
wait_exit -t 120 "$SPAWNED"
[ "$EXIT_STATUS" = 0 ] || { cat "$TMP/n.err"; fail "the trace right after the kill failed ($EXIT_STATUS)"; }
grep "started in" "$TMP/n.err" || true
n=$(wc -l < "$TMP/n.log")
[ "$n" -ge 300 ] || fail "attach_reader logged $n reads, want 300"
pycheck reader_log.has_reads "$TMP/n.json" "$n" "$TMP/data.bin" || fail "the trace right after the kill lost reads"

# ---- Ctrl-C: the same child, the same end
before=$(reapers)
spawn -s KILL -e "$TMP/i.err" gpuio3 "$GPUIO" trace --vfs-mode=per_syscall -p "$IDLE" -o "$TMP/i.json"
GPID=$SPAWNED
wait_line -m "gpuio never started tracing" "tracing" "$TMP/i.err"
R=$(comm -13 <(echo "$before") <(reapers))
[ -n "$R" ] || fail "no gpuio-detach while tracing"
kill -INT "$GPID"
wait_exit -t 30 "$GPID"
[ "$EXIT_STATUS" = 0 ] || { cat "$TMP/i.err"; fail "Ctrl-C: gpuio exited $EXIT_STATUS"; }
wait_for -t 120 -i 0.1 "gpuio-detach $R to exit after Ctrl-C" _gone "$R"
check_struct "$TMP/i.json"

# ---- SIGKILL while the traced process reads on: traced by no one after
# the producer position of a ring buffer map, by map id (page 1 of its mmap)
cat > "$TMP/rb_pos.py" <<'EOF'
import ctypes, mmap, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(struct.pack("III", int(sys.argv[1]), 0, 0), 128)
fd = libc.syscall(321, 14, attr, 128)          # bpf(BPF_MAP_GET_FD_BY_ID)
if fd < 0:
    sys.exit("map %s: errno %d" % (sys.argv[1], ctypes.get_errno()))
m = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ, offset=4096)
print(struct.unpack_from("Q", m, 0)[0])
EOF
rb_pos() { python3 "$TMP/rb_pos.py" "$1" || fail "cannot read ring buffer map $1"; }
rings() { bpftool map show -j 2>/dev/null | python3 -c '
import json, sys
print("\n".join(str(m["id"]) for m in json.load(sys.stdin) if m.get("type") == "ringbuf" and m.get("name") == "events"))' | sort; }
command -v bpftool >/dev/null || fail "bpftool missing (scripts/install-deps.sh)"
spawn -s KILL reader "$PROG" "$TMP/data.bin" "$TMP/r.log" 2000 1000000
READER=$SPAWNED
before=$(reapers) rb_before=$(rings)
spawn -s KILL -e "$TMP/r.err" gpuio4 "$GPUIO" trace --vfs-mode=per_syscall -p "$READER" --no-export \
  --capture "$TMP/r.gpuio"
GPID=$SPAWNED
wait_line -m "gpuio never started tracing" "tracing" "$TMP/r.err"
R=$(comm -13 <(echo "$before") <(reapers))
RB=$(comm -13 <(echo "$rb_before") <(rings))
[ "$(echo "$R" | grep -c .)" = 1 ] || fail "want one new gpuio-detach while tracing, found: '$R'"
[ "$(echo "$RB" | grep -c .)" = 1 ] || fail "want one new events ring buffer, found: '$RB'"
p0=$(rb_pos "$RB"); sleep 0.5; p1=$(rb_pos "$RB")
[ "$p1" -gt "$p0" ] || fail "the ring did not grow while gpuio traced the reader ($p0 -> $p1)"
kill -KILL "$GPID"
wait "$GPID" 2>/dev/null || true
proc_unreg "$GPID"
sleep 0.2                                       # the child sees gpuio's end
p2=$(rb_pos "$RB"); sleep 0.5; p3=$(rb_pos "$RB")
left=$(links_of "$R")
echo "the reader's ring: +$((p1 - p0)) bytes in 0.5 s traced; after SIGKILL +$((p3 - p2)) in 0.5 s," \
  "while gpuio-detach still held $left links"
if [ "$left" -gt 0 ]; then
  [ "$p3" = "$p2" ] || fail "after gpuio's SIGKILL its links still traced the reader: the ring grew $((p3 - p2)) bytes"
else
  # a kernel whose link closes do not wait leaves no window to look into
  echo "not checked: gpuio-detach closed every link within 0.7 s of the kill (this kernel's closes do not wait)"
fi
wait_for -t 120 -i 0.1 "gpuio-detach $R to exit after SIGKILL" _gone "$R"
echo "per-syscall links: held by gpuio-detach, closed after SIGKILL and Ctrl-C, tracing no one meanwhile"

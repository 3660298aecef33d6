#!/usr/bin/env bash
# t_sockets: socket I/O and its peers, against what the programs counted.
#
#   A. gen_capture sockets (every socket call shape, seven peers: IPv4,
#      IPv6, unix by path and abstract, socketpair, unconnected UDP, a
#      hostile unix path; one socket with no peer record): both exports
#      hold every socket slice at its ns with its peer, bytes or errno,
#      requested, latency, messages (checks/sockets.gen_export), equal to
#      each other (compare_exports.py); the report's peers add up to the
#      manifest's calls, requests and the TCP request latency included; the
#      socket without a peer record stays a file; info counts 7 sock_peer.
#   B. launch: tests/progs/sock_client.py fetches K objects from
#      tests/progs/object_store.py (127.0.0.1, L ms each), makes 3
#      exchanges over a unix socket (sendmsg/recvmsg) and, where ::1 works,
#      3 over IPv6, and moves bytes through a pipe. Per peer, the bytes each
#      way and the calls equal what the client's calls returned, requests
#      equal its requests, time in receives is within 10% + 20 ms of its
#      own clock, the peer's address and port exact; what gpuio says the
#      client received from the store is the store's bytes_sent plus the
#      headers the client counted; no pipe slice (no --all-fds); the
#      report's peers table (text and JSON) and the remote_data advice with
#      the store's requests. JSON and .pftrace pass check_struct (Perfetto's
#      importer, with the counts gpuio says it wrote) and compare_exports.
#   C. attach: the same client, connected before gpuio attaches (trace -p),
#      does its I/O once gpuio traces: the same checks.
#   D. --no-sockets: no socket slice, no peer record.
source "$(dirname "$0")/lib.sh"
need_root
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
PROGS=$GPUIO_SRC/tests/progs
K=12 SIZE=262144 LAT=25

# ---- A: synthetic ---------------------------------------------------------
"$GPUIO_TESTS/gen_capture" sockets "$TMP/gen.gpuio" > "$TMP/gen.manifest" || fail "gen_capture sockets"
"$GPUIO" convert -q "$TMP/gen.gpuio" -o "$TMP/gen.json" || fail "A: convert to JSON"
"$GPUIO" convert -q "$TMP/gen.gpuio" -o "$TMP/gen.pftrace" || fail "A: convert to .pftrace"
check_struct "$TMP/gen.json"
check_struct "$TMP/gen.pftrace"
pycheck sockets.gen_export "$TMP/gen.json" "$TMP/gen.manifest" || fail "A: JSON export"
pycheck sockets.gen_export "$TMP/gen.pftrace" "$TMP/gen.manifest" || fail "A: .pftrace export"
python3 "$GPUIO_SRC/tests/compare_exports.py" "$TMP/gen.json" "$TMP/gen.pftrace" ||
  fail "A: the JSON and the .pftrace differ"
"$GPUIO" report --json "$TMP/gen.gpuio" > "$TMP/gen.report.json" || fail "A: report --json"
pycheck sockets.gen_report "$TMP/gen.report.json" "$TMP/gen.manifest" || fail "A: report"
"$GPUIO" report "$TMP/gen.gpuio" > "$TMP/gen.report.txt" || fail "A: report"
grep -q '^NETWORK' "$TMP/gen.report.txt" && grep -q '^ *10.0.0.5:9000 ' "$TMP/gen.report.txt" ||
  { cat "$TMP/gen.report.txt"; fail "A: no NETWORK table with 10.0.0.5:9000 in the text report"; }
"$GPUIO" report --html "$TMP/gen.html" "$TMP/gen.gpuio" || fail "A: report --html"
grep -q '<h2>Network</h2>' "$TMP/gen.html" && grep -q 'unix:@gpuio-test' "$TMP/gen.html" ||
  fail "A: no network table in the HTML report"
"$GPUIO" info "$TMP/gen.gpuio" | has 'sock_peer 7$' || fail "A: info does not count 7 sock_peer records"

# ---- the servers (untraced) -----------------------------------------------
HAVE_V6=0
"$PY" -c 'import socket; socket.create_server(("::1", 0), family=socket.AF_INET6)' 2>/dev/null && HAVE_V6=1
[ "$HAVE_V6" = 1 ] || echo "note: no IPv6 on loopback here: the [::1] exchanges are left out"
spawn -l "$TMP/ux.out" ux "$PY" "$PROGS/sock_client.py" --serve "unix:$TMP/ux.sock"
wait_file "$TMP/ux.sock"
side=(--unix "$TMP/ux.sock")
if [ "$HAVE_V6" = 1 ]; then
  spawn -l "$TMP/v6.out" v6 "$PY" "$PROGS/sock_client.py" --serve "tcp6:$TMP/v6.port"
  wait_file "$TMP/v6.port"
  side+=(--v6-port-file "$TMP/v6.port")
fi
# store_start NAME: an object store whose log is $TMP/NAME.store.json at its end
store_start() {
  spawn -l "$TMP/$1.store.out" "store $1" "$PY" "$PROGS/object_store.py" --objects "$K" \
    --size "$SIZE" --latency-ms "$LAT" --port-file "$TMP/$1.port" --log "$TMP/$1.store.json"
  STORE=$SPAWNED
  wait_file "$TMP/$1.port"
}
store_stop() {  # NAME: SIGTERM, and its log
  proc_stop "$STORE"
  wait_file "$TMP/$1.store.json"
}
# checks NAME: both exports, the report, against the client's and the store's logs
checks() {
  local n=$1
  "$GPUIO" convert -q "$TMP/$n.gpuio" -o "$TMP/$n.pftrace" || fail "$n: convert to .pftrace"
  check_struct "$TMP/$n.json"
  check_struct "$TMP/$n.pftrace"
  python3 "$GPUIO_SRC/tests/compare_exports.py" "$TMP/$n.json" "$TMP/$n.pftrace" ||
    fail "$n: the JSON and the .pftrace differ"
  "$GPUIO" report --json "$TMP/$n.gpuio" > "$TMP/$n.report.json" || fail "$n: report --json"
  for t in "$TMP/$n.json" "$TMP/$n.pftrace"; do
    pycheck sockets.live "$t" "$TMP/$n.report.json" "$TMP/$n.client.json" "$TMP/$n.store.json" ||
      fail "$n: $(basename "$t") against what the client and the store counted"
  done
  "$GPUIO" report "$TMP/$n.gpuio" > "$TMP/$n.report.txt" || fail "$n: report"
  grep -q "^ *127.0.0.1:$(cat "$TMP/$n.port") .* client .* $K " "$TMP/$n.report.txt" &&
    grep -q '\[remote_data\]' "$TMP/$n.report.txt" ||
    { cat "$TMP/$n.report.txt"; fail "$n: the text report lacks the store's row or the advice"; }
}

# ---- B: launch ------------------------------------------------------------
store_start b
"$GPUIO" trace -q -o "$TMP/b.json" -- "$PY" "$PROGS/sock_client.py" --port-file "$TMP/b.port" \
  --objects "$K" --out "$TMP/b.client.json" "${side[@]}" --pipe-bytes 4096 2> "$TMP/b.err" ||
  { cat "$TMP/b.err"; fail "B: gpuio trace (or the client) failed"; }
store_stop b
checks b

# ---- C: attach ------------------------------------------------------------
store_start c
spawn -l "$TMP/c.client.out" client "$PY" "$PROGS/sock_client.py" --port-file "$TMP/c.port" \
  --objects "$K" --out "$TMP/c.client.json" "${side[@]}" --pipe-bytes 4096 \
  --ready "$TMP/c.ready" --go "$TMP/c.go"
CPID=$SPAWNED
wait_file "$TMP/c.ready"
spawn -e "$TMP/c.err" gpuio "$GPUIO" trace -p "$CPID" -o "$TMP/c.json"
GPID=$SPAWNED
wait_line -t 30 -F tracing "$TMP/c.err"
touch "$TMP/c.go"
wait_exit -t 60 "$CPID"
[ "$EXIT_STATUS" = 0 ] || { cat "$TMP/c.client.out"; fail "C: the client failed"; }
wait_exit -t 30 "$GPID"
[ "$EXIT_STATUS" = 0 ] || { cat "$TMP/c.err"; fail "C: gpuio trace -p exited $EXIT_STATUS"; }
store_stop c
checks c

# ---- D: --no-sockets ------------------------------------------------------
store_start d
"$GPUIO" trace -q --no-sockets -o "$TMP/d.json" -- "$PY" "$PROGS/sock_client.py" \
  --port-file "$TMP/d.port" --objects 2 --out "$TMP/d.client.json" 2> "$TMP/d.err" ||
  { cat "$TMP/d.err"; fail "D: gpuio trace --no-sockets failed"; }
store_stop d
check_struct "$TMP/d.json"
pycheck sockets.no_sockets "$TMP/d.json" || fail "D: --no-sockets"
echo "PASS: socket calls with their peers, bytes, requests and latency as the programs counted them"

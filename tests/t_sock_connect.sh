#!/usr/bin/env bash
# t_sock_connect: connect and accept, against the program's own clock.
#
# build/tests/sock_connect 6: a forked server accepts 6 TCP connections on
# 127.0.0.1 (accept and accept4), the client times each connect() on
# CLOCK_MONOTONIC, then one connect is refused and one non-blocking accept
# finds nothing (EAGAIN). In the default mode and per_syscall: 6 connect
# slices naming the server, each inside the client's window; the refused one
# ECONNREFUSED inside its window; 6 accepts naming the client ports the
# client saw, none for EAGAIN; the report's per-peer connects and connect
# time. With --no-sockets: no connect or accept slice.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/sock_connect"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

for mode in default per_syscall; do
  d="$TMP/$mode"
  mkdir -p "$d"
  opt=()
  [ "$mode" = default ] || opt=(--vfs-mode="$mode")
  "$GPUIO" trace -q "${opt[@]}" -o "$d/run.json" -- "$PROG" 6 >"$d/prog.out" 2>"$d/gpuio.err" ||
    { cat "$d/gpuio.err" "$d/prog.out"; fail "$mode: gpuio trace -- sock_connect failed"; }
  tail -n 1 "$d/prog.out"
  check_struct "$d/run.json"
  "$GPUIO" report --json "$d/run.gpuio" >"$d/report.json" 2>"$d/report.err" ||
    { cat "$d/report.err"; fail "$mode: gpuio report --json failed"; }
  echo "$mode ($(grep -o '"vfs_mode":"[^"]*"' "$d/run.json" | head -n1)):"
  pycheck sockets.connections "$d/run.json" "$d/report.json" "$d/prog.out" ||
    fail "$mode: connects and accepts do not match the program's"
done

"$GPUIO" trace -q --no-sockets -o "$TMP/off.json" -- "$PROG" 2 >/dev/null 2>"$TMP/off.err" ||
  { cat "$TMP/off.err"; fail "--no-sockets: gpuio trace failed"; }
n=$(grep -cE '"name":"(connect|accept)"' "$TMP/off.json" || true)
[ "$n" = 0 ] || fail "--no-sockets: $n connect/accept slices"
echo "PASS: connects and accepts named, timed inside the program's windows, counted per peer"

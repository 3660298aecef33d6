#!/usr/bin/env bash
# t_uring_sock: socket I/O through io_uring (IORING_OP_CONNECT, ACCEPT, SEND,
# SENDMSG, RECV, RECVMSG), against the program's own counts.
#
# build/tests/uring_sock 6 3000: a forked echo server accepts with io_uring
# and echoes with RECV/SEND; the client connects with io_uring and makes 6
# round trips of 3000 B (SEND/RECV, SENDMSG/RECVMSG alternately). Per process
# each request kind's count and bytes equal what its completions said; the
# connect names the server, the accept the client; every request names its
# socket's peer, sits on an async lane and names its submitter; the report's
# per-peer bytes and connects; Perfetto's importer takes the trace.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/uring_sock"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

"$GPUIO" trace -q -o "$TMP/run.json" -- "$PROG" 6 3000 >"$TMP/prog.out" 2>"$TMP/gpuio.err" ||
  { cat "$TMP/gpuio.err" "$TMP/prog.out"; fail "gpuio trace -- uring_sock failed"; }
cat "$TMP/prog.out"
check_struct "$TMP/run.json"
"$GPUIO" report --json "$TMP/run.gpuio" >"$TMP/report.json" 2>"$TMP/report.err" ||
  { cat "$TMP/report.err"; fail "gpuio report --json failed"; }
pycheck sockets.uring "$TMP/run.json" "$TMP/report.json" "$TMP/prog.out" ||
  fail "io_uring socket requests do not match the program's"
echo "PASS: io_uring connect, accept, send(msg) and recv(msg) named with their peers, bytes exact"

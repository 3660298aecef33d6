#!/usr/bin/env bash
# t_hostile_live: a real file with a hostile name, read by a traced program,
# comes out as valid JSON naming that file.
#
# The directory and the file names hold '"', '\', a newline, a tab, a
# control byte and invalid UTF-8 (0xff, 0xc3 0x28), plus valid non-ASCII.
# `cat` reads the file to /dev/null, so with read(2) (its argv holds the name too, so the process name is
# hostile as well). Ground truth: the bytes of the path as created. The
# exporter's documented rule (user/lib/json_writer.h) is escaping plus U+FFFD
# per maximal ill-formed subpart, i.e. Python's bytes.decode("utf-8",
# "replace"). Checks: the checker accepts the JSON (valid UTF-8, valid
# JSON); some read slice's path equals the expected decoded string exactly,
# its bytes equal the file's size; the process name contains the name too.
source "$(dirname "$0")/lib.sh"
need_root


mkdir -p "$TMP/h"
# create dir + file by bytes (checks/procs.py: the names); the file's path as hex for the launch
HEXPATH=$(pycheck procs.make_hostile "$TMP/h")
# the launched command gets the raw bytes as argv[1] (bash cannot hold them
# in a variable reliably, so decode the hex in a tiny exec wrapper)
"$GPUIO" trace -q -o "$TMP/run.json" -- \
  python3 -c 'import os, sys; p = bytes.fromhex(sys.argv[1]); os.execvp("cat", ["cat", p])' "$HEXPATH" \
  >/dev/null 2>"$TMP/gpuio.err" || { cat "$TMP/gpuio.err"; fail "gpuio trace -- cat HOSTILE exited non-zero"; }
check_struct "$TMP/run.json"

pycheck procs.hostile_live "$TMP/run.json" "$HEXPATH" ||
  fail "the hostile name did not come out as the documented escaped string"
echo "PASS: a hostile file name comes out as valid JSON, decoded by the documented rule"

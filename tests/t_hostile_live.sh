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
# create dir + file by bytes; print the file's path as hex for the launch
HEXPATH=$(python3 - "$TMP/h" <<'EOF'
import os, sys
base = os.fsencode(sys.argv[1])
d = base + b"/dir \"q\" \\b \xff"
f = d + b"/f\"q\\b\nnl\ttab\x01ctl\xff \xc3\x28 \xc3\xa9t\xc3\xa9 \xe2\x82.bin"
os.mkdir(d)
with open(f, "wb") as fp:
    fp.write(b"0123456789" * 12345)
print(f.hex())
EOF
)
# the launched command gets the raw bytes as argv[1] (bash cannot hold them
# in a variable reliably, so decode the hex in a tiny exec wrapper)
"$GPUIO" trace -q -o "$TMP/run.json" -- \
  python3 -c 'import os, sys; p = bytes.fromhex(sys.argv[1]); os.execvp("cat", ["cat", p])' "$HEXPATH" \
  >/dev/null 2>"$TMP/gpuio.err" || { cat "$TMP/gpuio.err"; fail "gpuio trace -- cat HOSTILE exited non-zero"; }
check_struct "$TMP/run.json"

python3 - "$TMP/run.json" "$HEXPATH" <<'EOF' || fail "the hostile name did not come out as the documented escaped string"
import os, sys
sys.path.insert(0, os.environ.get("GPUIO_SRC", ".") + "/tests")
import truth
trace, hexpath = sys.argv[1:]
raw = open(trace, "rb").read()
try:
    raw.decode("utf-8", "strict")
    print("ok   the JSON file is valid UTF-8")
except UnicodeDecodeError as e:
    print(f"FAIL the JSON file is not valid UTF-8: {e}"); sys.exit(1)
p = bytes.fromhex(hexpath)
want = os.path.realpath(p).decode("utf-8", "replace")
size = os.path.getsize(p)
ev = truth.load(trace)
reads = truth.vfs(ev, path=want, names=truth.READ_CALLS)
got = sum(e["args"].get("bytes", 0) for e in reads)
bad = 0
if not reads or got != size:
    near = sorted({e["args"].get("path") for e in truth.vfs(ev) if "tab" in str(e["args"].get("path"))})
    print(f"FAIL no read of {want!r} moving {size} bytes (got {got}); paths seen: {near}"); bad = 1
else:
    print(f"ok   {len(reads)} reads of {want!r}, {got} bytes")
opens = truth.vfs(ev, path=want, names=truth.OPEN_CALLS)
if not opens:
    print("FAIL the open of the hostile file is not named by it"); bad = 1
leaf = os.path.basename(p).decode("utf-8", "replace")
names = truth.process_names(ev)
if not any(leaf in n for n in names.values()):
    print(f"FAIL no process_name holds the hostile argv: {sorted(names.values())}"); bad = 1
else:
    print("ok   the process name holds the hostile argv")
sys.exit(bad)
EOF
echo "PASS: a hostile file name comes out as valid JSON, decoded by the documented rule"

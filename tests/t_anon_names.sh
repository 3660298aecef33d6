#!/usr/bin/env bash
# t_anon_names: files without an ordinary name get the name the kernel gives
# them in /proc/PID/fd, never "/" or a name that is another file's.
#
# tests/progs/anon_files writes and reads a memfd, an O_TMPFILE file, a file
# unlinked while open, a pipe and an eventfd, and prints each one's
# readlink(/proc/self/fd/N) (the ground truth) with the bytes it moved.
# Checked: with --all-fds every file's read and write calls carry exactly
# that name and those bytes; by default the memfd, the tmpfile and the
# unlinked file do, and the pipe and the eventfd are absent. The unlinked
# file was named when it was opened, before the unlink: its name is the
# kernel's without " (deleted)" (gpuio names a file once, at first sight).
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/anon_files"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"
mkdir -p "$TMP/d"

for mode in all default; do
  flags=(); [ $mode = all ] && flags=(--all-fds)
  "$GPUIO" trace -q "${flags[@]}" -o "$TMP/$mode.json" -- "$PROG" "$TMP/d" \
    >"$TMP/$mode.truth" 2>"$TMP/$mode.err" || { cat "$TMP/$mode.err"; fail "trace ($mode) failed"; }
  check_struct "$TMP/$mode.json"
  python3 - "$TMP/$mode.json" "$TMP/$mode.truth" $mode <<'PYEOF' || fail "names ($mode)"
import json, sys
trace, truth, mode = sys.argv[1:]
ev = json.load(open(trace))
calls = {}
for e in ev:
    a = e.get("args", {})
    if e.get("cat") == "vfs" and e["name"] in ("read", "write", "pread64", "pwrite64"):
        op = "read" if "read" in e["name"] else "write"
        calls.setdefault(a.get("path"), {"read": 0, "write": 0})[op] += a.get("bytes") or 0
bad = 0
want = [json.loads(l) for l in open(truth)]
# the pipe's two ends are one pipe: add their bytes
byname = {}
for w in want:
    name = w["name"]
    if w["what"] == "unlinked":
        assert name.endswith(" (deleted)"), name
        name = name[:-len(" (deleted)")]
    t = byname.setdefault(name, {"what": w["what"], "read": 0, "write": 0})
    t["read"] += w["read"]; t["write"] += w["wrote"]
for name, w in byname.items():
    absent = mode == "default" and w["what"] in ("pipe", "pipe_w", "eventfd")
    got = calls.get(name)
    if absent:
        if got:
            print(f"FAIL {w['what']} {name!r} traced without --all-fds"); bad += 1
        else:
            print(f"ok   {w['what']} absent by default")
        continue
    if got != {"read": w["read"], "write": w["write"]}:
        print(f"FAIL {w['what']}: want {name!r} read {w['read']} write {w['write']}, got {got}")
        bad += 1
    else:
        print(f"ok   {w['what']}: {name!r} read {w['read']} write {w['write']}")
for p in calls:
    if p in ("/", None) or (p or "").startswith("?"):
        print(f"FAIL a call on an unnamed file: {p!r} {calls[p]}"); bad += 1
sys.exit(1 if bad else 0)
PYEOF
done
echo "PASS t_anon_names"

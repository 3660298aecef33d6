#!/usr/bin/env bash
# Hostile names — '"', '\', newline, tab, control bytes, NUL, invalid UTF-8 —
# in paths, process/thread/disk names and the capture header export as valid
# JSON (plain and gzip), and every name round-trips exactly: the decoded JSON
# string equals the raw bytes the generator wrote, decoded by Python's own
# bytes.decode("utf-8", "replace") — the rule user/lib/json_writer.h documents
# (one U+FFFD per maximal ill-formed subpart). Ground truth: gen_capture's
# manifest, never the exporter.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x "$GPUIO" ] || fail "missing $GPUIO (run: make)"

"$GEN" hostile "$TMP/h.gpuio" > "$TMP/manifest.json" || fail "gen_capture hostile failed"

for out in h.json h.json.gz; do
  "$GPUIO" convert "$TMP/h.gpuio" -o "$TMP/$out" 2> "$TMP/err" || { cat "$TMP/err"; fail "convert -o $out failed"; }
  $CHECK "$TMP/$out" || fail "check_trace rejects $out"
  python3 - "$TMP/manifest.json" "$TMP/$out" "$GPUIO_SRC/tests" <<'EOF' || fail "round trip of hostile names ($out)"
import gzip, json, sys
sys.path.insert(0, sys.argv[3])
import check_trace as ct

m = json.load(open(sys.argv[1]))
path = sys.argv[2]
events = ct.load(path)            # strict UTF-8 + strict JSON (no raw control chars)
bad = []

def want(hexstr):
    return bytes.fromhex(hexstr).decode("utf-8", "replace")

def expect(what, got, exp):
    if got != exp:
        bad.append("%s: got %r, want %r" % (what, got, exp))

# one event per line: every line between [ and ] parses on its own
raw = open(path, "rb").read()
if raw[:2] == b"\x1f\x8b":
    raw = gzip.decompress(raw)
lines = raw.decode("utf-8").split("\n")
expect("first line", lines[0], "[")
body = [l for l in lines[1:] if l not in ("]", "")]
for l in body:
    json.loads(l[:-1] if l.endswith(",") else l)
expect("lines", len(body), len(events))

vfs = [e for e in events if e.get("cat") == "vfs"]
by_fd = {}
for e in vfs:
    by_fd.setdefault(e["args"].get("fd"), []).append(e)
for p in m["paths"]:
    evs = by_fd.get(p["fd"], [])
    if not evs:
        bad.append("no vfs event for fd %d" % p["fd"])
        continue
    for e in evs:
        expect("path of fd %d" % p["fd"], e["args"]["path"], want(p["expect_hex"]))
    if "ftype" in p:
        expect("ftype of fd %d" % p["fd"], evs[0]["args"].get("ftype"), p["ftype"])
    elif "ftype" in evs[0]["args"]:
        bad.append("fd %d: regular file with ftype %r" % (p["fd"], evs[0]["args"]["ftype"]))

names = {}
for e in events:
    if e.get("ph") == "M" and e["name"] in ("process_name", "thread_name"):
        names[(e["name"], e["pid"], e.get("tid"))] = e["args"]["name"]
pr = m["process"]
expect("process_name", names.get(("process_name", pr["pid"], None)), want(pr["name_hex"]))
for t in m["threads"]:
    expect("thread_name %d" % t["tid"], names.get(("thread_name", pr["pid"], t["tid"])),
           want(t["name_hex"]))
disk = want(m["disk_hex"])
expect("disk process_name", names.get(("process_name", 0x40000000, None)), "disk " + disk)
blocks = [e for e in events if e.get("cat") == "block" and e["ph"] == "X"]
expect("block slices", len(blocks), 1)
if blocks:
    expect("block dev", blocks[0]["args"]["dev"], disk)
    expect("block path", blocks[0]["args"]["path"], want(m["block_path_hex"]))
counters = {e["name"] for e in events if e.get("ph") == "C"}
expect("counter names", counters, {"throughput " + disk})

info = ct.trace_info(events)
expect("hostname", info["hostname"], want(m["hostname_hex"]))
expect("cmdline", info["cmdline"], want(m["cmdline_hex"]))
expect("target", info["target"], want(m["target_hex"]))
expect("dropped", info["dropped"], m["dropped"])
expect("drops_known", info["drops_known"], True)
expect("unresolved_paths", info["unresolved_paths"], m["unresolved_paths"])
expect("capture_complete", info["capture_complete"], True)

# the replacement rule itself, on bytes the generator wrote (sanity of the oracle)
expect("rule: lone c3", want("c378"), "\ufffdx")
expect("rule: cut 3-byte", want("e282"), "\ufffd")
expect("rule: surrogate", want("eda080"), "\ufffd\ufffd\ufffd")

for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF
done

# `gpuio info` prints hostile header strings without raw control bytes
"$GPUIO" info "$TMP/h.gpuio" > "$TMP/info.txt" || fail "gpuio info failed"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/info.txt"; then
  fail "gpuio info printed raw control bytes"
fi
"$GPUIO" info --json "$TMP/h.gpuio" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["stats"]["dropped"] == 5 and d["complete"], d
' || fail "gpuio info --json on the hostile capture"
echo "hostile names round-trip"

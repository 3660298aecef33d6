#!/usr/bin/env bash
# Debian's protoc decodes gpuio's .pftrace against our trimmed schema
# (user/export/proto/gpuio_trace.proto: Perfetto's field numbers) with no unknown
# fields, and the decoded packets hold, field by field, what gen_capture's
# "basic" capture holds: the clock snapshot (MONOTONIC + REALTIME from the
# header, MONOTONIC primary), sequence flags and defaults, the process,
# thread, disk, lane and counter track descriptors, the openat and pread64
# slices with their args (interned names and strings resolved), the block
# request with queue/service time, the flow from the pread64 to it, the
# counters and the info instant.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
command -v protoc > /dev/null || skip "protoc not installed (apt-get install protobuf-compiler)"
PROTO_DIR="$GPUIO_SRC/user/export/proto"

"$GEN" basic "$TMP/b.gpuio" > /dev/null || fail "gen_capture basic failed"
"$GPUIO" convert -q "$TMP/b.gpuio" -o "$TMP/b.pftrace" || fail "convert failed"
protoc --decode=gpuio.Trace -I"$PROTO_DIR" "$PROTO_DIR/gpuio_trace.proto" \
  < "$TMP/b.pftrace" > "$TMP/b.txt" 2> "$TMP/protoc.err" \
  || { cat "$TMP/protoc.err"; fail "protoc cannot decode the trace"; }
# fields protoc does not know are printed by number: there must be none
if grep -nE '^ *[0-9]+: |^ *[0-9]+ \{' "$TMP/b.txt" > "$TMP/unknown"; then
  head "$TMP/unknown"; fail "fields outside the schema"
fi

python3 - "$TMP/b.txt" <<'EOF' || fail "decoded fields differ from the capture"
import re, sys

def tokens(text):
    pat = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(-?[0-9][0-9.eE+-]*)|("(?:[^"\\]|\\.)*")|([:{}]))')
    i = 0
    while True:
        m = pat.match(text, i)
        if not m or m.end() == i:
            if text[i:].strip():
                raise SystemExit("cannot parse protoc output at %r" % text[i:i + 40])
            return
        i = m.end()
        yield m.group(1) or m.group(2) or m.group(3) or m.group(4)

def unquote(s):
    b = s[1:-1].encode("latin-1").decode("unicode_escape").encode("latin-1")
    return b.decode("utf-8")

def parse(it):
    msg = {}
    for tok in it:
        if tok == "}":
            return msg
        name = tok
        nxt = next(it)
        if nxt == "{":
            val = parse(it)
        else:
            assert nxt == ":", nxt
            v = next(it)
            val = unquote(v) if v.startswith('"') else (int(v) if re.fullmatch(r"-?\d+", v) else
                  float(v) if re.fullmatch(r"-?[0-9.eE+-]+", v) else
                  {"true": True, "false": False}.get(v, v))
        msg.setdefault(name, []).append(val)
    return msg

trace = parse(iter(tokens(open(sys.argv[1]).read())))
pkts = trace["packet"]
bad = []
def expect(what, got, want):
    if got != want:
        bad.append("%s: got %r, want %r" % (what, got, want))
def one(m, k, default=None):
    v = m.get(k)
    return v[0] if v else default

BASE = 1000000000000
# packet 0: the clock snapshot that makes Perfetto keep the events
p0 = pkts[0]
cs = one(p0, "clock_snapshot")
expect("clocks", [(one(c, "clock_id"), one(c, "timestamp")) for c in cs["clocks"]],
       [(3, BASE), (1, 1700000000123456789), (6, BASE)])  # BOOTTIME: another boot, no suspend known
expect("primary clock", one(cs, "primary_trace_clock"), "BUILTIN_CLOCK_MONOTONIC")
expect("first flags", one(p0, "sequence_flags"), 1)
expect("defaults clock", one(one(p0, "trace_packet_defaults"), "timestamp_clock_id"), 3)
for i, p in enumerate(pkts):
    expect("packet %d sequence" % i, one(p, "trusted_packet_sequence_id"), 1)
    if i:
        expect("packet %d flags" % i, one(p, "sequence_flags"), 2)

# interning tables (one sequence, cleared once)
names, cats, anames, strs = {}, {}, {}, {}
for p in pkts:
    for d in p.get("interned_data", []):
        for k, tab, f in (("event_names", names, "name"), ("event_categories", cats, "name"),
                          ("debug_annotation_names", anames, "name"),
                          ("debug_annotation_string_values", strs, "str")):
            for e in d.get(k, []):
                assert one(e, "iid") not in tab, "iid %d of %s bound twice" % (one(e, "iid"), k)
                tab[one(e, "iid")] = one(e, f)

tracks = {}
for p in pkts:
    td = one(p, "track_descriptor")
    if td:
        tracks[one(td, "uuid")] = td
procs = [(one(one(t, "process"), "pid"), one(one(t, "process"), "process_name"))
         for t in tracks.values() if "process" in t]
expect("processes", procs, [(10, "app: app --epochs 3")])
threads = sorted((one(one(t, "thread"), "pid"), one(one(t, "thread"), "tid"),
                  one(one(t, "thread"), "thread_name")) for t in tracks.values() if "thread" in t)
expect("threads", threads, [(10, 10, "app"), (10, 11, "app-worker")])
plain = {one(t, "name"): t for t in tracks.values() if "name" in t}
disk = plain.get("disk sda")
expect("disk track", disk is not None, True)
if disk:
    expect("disk children order", one(disk, "child_ordering"), "EXPLICIT")
    lane = plain.get("lane 1", {})
    expect("lane parent", one(lane, "parent_uuid"), one(disk, "uuid"))
    expect("lane rank", one(lane, "sibling_order_rank"), 1)
    for col in ("read", "write"):
        c = plain.get("throughput sda %s_MiBps" % col, {})
        expect(col + " counter parent", one(c, "parent_uuid"), one(disk, "uuid"))
        expect(col + " counter unit", one(one(c, "counter", {}), "unit_name"), "MiB/s")

def args(te):
    out = {}
    for a in te.get("debug_annotations", []):
        k = anames[one(a, "name_iid")]
        if "string_value_iid" in a:
            out[k] = strs[one(a, "string_value_iid")]
        else:
            for f in ("int_value", "uint_value", "bool_value", "double_value", "string_value"):
                if f in a:
                    out[k] = one(a, f)
    return out

events = [(one(p, "timestamp"), one(p, "track_event")) for p in pkts if "track_event" in p]
by_name = {}
for ts, te in events:
    if one(te, "type") == "TYPE_SLICE_BEGIN":
        by_name.setdefault(names[one(te, "name_iid")], []).append((ts, te))
uuid_of_thread = {one(one(t, "thread"), "tid"): u for u, t in tracks.items() if "thread" in t}

ts, op = by_name["openat"][0]
expect("openat ts", ts, BASE + 1000)
expect("openat track", one(op, "track_uuid"), uuid_of_thread[10])
expect("openat category", [cats[c] for c in op["category_iids"]], ["vfs"])
expect("openat args", args(op), {"path": "/srv/ds/data.bin", "fd": 3, "flags": "O_RDONLY"})
ends = [t for t, te in events if one(te, "type") == "TYPE_SLICE_END" and
        one(te, "track_uuid") == uuid_of_thread[10]]
expect("openat end", ends[0], BASE + 1500)

preads = sorted(by_name["pread64"], key=lambda x: x[0])
ts, pr = preads[0]
expect("pread ts/track", (ts, one(pr, "track_uuid")), (BASE + 20000, uuid_of_thread[11]))
expect("pread args", args(pr), {"path": "/srv/ds/data.bin", "fd": 3, "bytes": 4096,
                                "requested": 4096, "offset": 0, "cache_miss_pages": 0})
ts, rd = by_name["read"][0]
expect("block ts", ts, BASE + 21000)
expect("block track", one(rd, "track_uuid"), one(plain.get("lane 1", {}), "uuid"))
expect("block args", args(rd), {"dev": "sda", "op": "read", "flags": "sync", "sector": 2048,
                                "bytes": 4096, "queue_us": 1.0, "service_us": 8.0, "pid": 10,
                                "tid": 11, "path": "/srv/ds/data.bin", "writeback": False})
expect("flow", (len(pr.get("flow_ids", [])), rd.get("terminating_flow_ids")),
       (1, pr.get("flow_ids")))
expect("second pread has no flow", preads[1][1].get("flow_ids"), None)

counters = [(ts, one(te, "double_counter_value")) for ts, te in events
            if one(te, "type") == "TYPE_COUNTER"]
expect("counters end at zero", [v for _, v in counters[-2:]], [0.0, 0.0])
info = [(ts, te) for ts, te in events if one(te, "type") == "TYPE_INSTANT"]
expect("info instant", [(ts, names[one(te, "name_iid")]) for ts, te in info],
       [(BASE, "gpuio trace info")])
ia = args(info[0][1])
expect("info", (ia["hostname"], ia["vfs_events"], ia["block_requests"], ia["flows"],
                ia["capture_complete"]), ("genhost", 3, 1, 1, True))
for b in bad:
    print("  " + b)
print("protoc: %d packets decoded, %d tracks, %d events checked" % (len(pkts), len(tracks), len(events)))
sys.exit(1 if bad else 0)
EOF
echo "protoc decodes the protobuf export field by field"

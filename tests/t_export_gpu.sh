#!/usr/bin/env bash
# GPU records (CUPTI collector, CUDA uprobes) in both exports and in `gpuio
# info`, against gen_capture's ground truth (gen_capture gpu): every GPU-side
# slice exactly (category, name, track, ts and dur to the ns), the tracks
# ("GPU N" pseudo-processes, "GPU N · stream S" lanes where kernels overlap,
# the overlap lane of a host thread whose NVTX range does not nest), arrows
# from each launch/copy/memset API call to its activities by correlation id
# (a graph launch fans out to two kernels), one slice per call that CUPTI and
# a uprobe both saw (uprobe args merged in), kernel names for launches (by
# correlation, or by GPU_SYM for a launch only uprobes saw), the busy-fraction
# counters, collector status and CUPTI drops in the trace info. JSON and
# protobuf must be equal (compare_exports.py); check_trace.py must accept both
# and must reject a trace whose GPU lanes overlap or whose arrow points back
# in time. Merged (two hosts) and 2 captures keep GPU tracks apart.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x "$GPUIO" ] || fail "missing $GPUIO (run: make)"
CMP="python3 $GPUIO_SRC/tests/compare_exports.py"

"$GEN" gpu "$TMP/g.gpuio" > "$TMP/g.manifest" || fail "gen_capture gpu failed"
"$GPUIO" convert "$TMP/g.gpuio" -o "$TMP/g.json" 2> "$TMP/g.err" || { cat "$TMP/g.err"; fail "convert to JSON failed"; }
grep -q "7 dropped" "$TMP/g.err" || { cat "$TMP/g.err"; fail "convert does not say the GPU collector dropped 7 records"; }
"$GPUIO" convert -q "$TMP/g.gpuio" -o "$TMP/g.pftrace" || fail "convert to .pftrace failed"
$CMP "$TMP/g.json" "$TMP/g.pftrace" > "$TMP/g.cmp" 2>&1 || { cat "$TMP/g.cmp"; fail "JSON and protobuf differ"; }
echo "gpu: $(cat "$TMP/g.cmp")"
check_struct "$TMP/g.json"
check_struct "$TMP/g.pftrace"

python3 - "$TMP/g.manifest" "$TMP/g.json" "$TMP/g.pftrace" "$GPUIO_SRC/tests" <<'EOF' || fail "the export differs from the generator's ground truth"
import json, sys
from collections import Counter
sys.path.insert(0, sys.argv[4])
import check_trace as ct
import pftrace as pf

m = json.load(open(sys.argv[1]))
ev = ct.load(sys.argv[2])
GPU_CATS = {"gpu", "cuda_api", "nvtx", "cuda_sync", "cupti_overhead"}
pname = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
         if e.get("ph") == "M" and e["name"] == "thread_name"}

def track(e):
    if e["pid"] < 0x20000000 and e["tid"] < 0x20000000:
        return "thread %d" % e["tid"]
    return tname[(e["pid"], e["tid"])]

got = [e for e in ev if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
want = Counter((s["cat"], bytes.fromhex(s["name_hex"]).decode(), s["track"], s["ts_ns"], s["dur_ns"])
               for s in m["slices"])
have = Counter((e["cat"], e["name"], track(e), ct.ns(e["ts"]), ct.ns(e["dur"])) for e in got)
for k in want - have:
    print("missing:", k)
for k in have - want:
    print("unexpected:", k)
assert want == have, "GPU slices differ from the manifest"
assert len(got) == len(m["slices"]), (len(got), len(m["slices"]))

# GPU processes and the lanes they hold
gpus = sorted(n for p, n in pname.items() if n.startswith("GPU "))
assert gpus == ["GPU 0", "GPU 1"], gpus
lanes = sorted(n for (p, t), n in tname.items() if n.startswith("GPU "))
assert lanes == sorted(["GPU 0 \u00b7 stream 7", "GPU 0 \u00b7 stream 7 \u00b7 lane 2",
                        "GPU 0 \u00b7 stream 13", "GPU 0 \u00b7 CUPTI overhead",
                        "GPU 1 \u00b7 stream 7", "GPU 1 \u00b7 stream 21", "GPU 1 \u00b7 sync"]), lanes
for (p, t), n in tname.items():
    if n.startswith("GPU "):
        assert pname[p] == n.split(" \u00b7 ")[0], (pname[p], n)

# flows: by correlation, out of API calls, into activities; counts as generated
outs = {e["bind_id"]: e for e in got if e.get("flow_out")}
ins = [e for e in got if e.get("flow_in")]
assert len(ins) == m["flows"], (len(ins), m["flows"])
for e in ins:
    src = outs[e["bind_id"]]
    assert src["cat"] == "cuda_api" and e["cat"] == "gpu", (src["name"], e["name"])
    assert src["args"]["correlation"] == e["args"]["correlation"], (src, e)
    assert src["args"]["source"] == "runtime", src
for s in m["slices"]:
    if s["flow"] == "out":
        e = [g for g in got if g["cat"] == s["cat"] and ct.ns(g["ts"]) == s["ts_ns"]][0]
        assert e.get("flow_out") and sum(1 for i in ins if i["bind_id"] == e["bind_id"]) == s["nflow"], e
    elif s["flow"] == "in":
        e = [g for g in got if g["cat"] == s["cat"] and ct.ns(g["ts"]) == s["ts_ns"] and
             track(g) == s["track"]][0]
        assert e.get("flow_in"), e
    else:
        for g in got:
            if g["cat"] == s["cat"] and ct.ns(g["ts"]) == s["ts_ns"] and track(g) == s["track"]:
                assert "bind_id" not in g, g

# dedup: the merged calls carry the uprobe's args, the uprobe-only launch its symbol
api = [e for e in got if e["cat"] == "cuda_api"]
assert not any(e["args"]["source"].startswith("uprobe") and e["name"] != "cuLaunchKernel" for e in api), \
    "a uprobe record CUPTI also saw was not merged"
for mg in m["merged"]:
    e = [a for a in api if a["name"] == mg["name"] and ct.ns(a["ts"]) == mg["ts_ns"]]
    assert len(e) == 1, (mg, e)
    a = e[0]["args"]
    assert a.get("uprobe") is True, a
    for k in ("func", "kernel", "bytes", "memcpy_kind"):
        if k in mg:
            assert a.get(k) == mg[k], (k, a.get(k), mg[k])
uo = [e for e in api if e["args"]["source"] == "uprobe_driver"]
assert len(uo) == 1 and uo[0]["args"]["kernel"] == m["uprobe_only"]["kernel"], uo
err = [e for e in api if e["args"]["ret"] != 0]
assert len(err) == 1 and err[0]["args"]["error"] == "cudaErrorMemoryAllocation", err

# busy fraction per GPU: exactly the union of activities per 1 ms bucket
for g, pts in m["busy"].items():
    pid = [p for p, n in pname.items() if n == g][0]
    c = [(ct.ns(e["ts"]), e["args"]["fraction"]) for e in ev
         if e.get("ph") == "C" and e["pid"] == pid]
    assert c == [(t, v) for t, v in pts], (g, c, pts)

# the info: collector status, drops
info = ct.trace_info(ev)
gi = info["gpu"]
assert info["dropped"] == m["cupti_dropped"] and info["drops"]["cupti_dropped"] == m["cupti_dropped"], info["drops"]
assert gi["cupti_dropped"] == m["cupti_dropped"], gi
assert gi["processes"]["500"]["state"] == "final" and gi["processes"]["500"]["clock"] == "monotonic_callback"
p6 = gi["processes"]["600"]
assert p6["state"] == "unavailable" and "MULTIPLE_SUBSCRIBERS" in p6["reason"] and p6["cupti_error"] == 39, p6
assert gi["api_calls_merged"] == m["merged_count"] and gi["flows"] == m["flows"], gi
assert gi["dangling_correlations"] == m["dangling"] and gi["overlap_slices"] == m["overlap_slices"], gi
assert info["record_counts"]["gpu_kernel"] == 6 and info["record_counts"]["cuda_api"] == 17, info["record_counts"]

# protobuf: the same arrows, bound the way trace processor binds them
t = pf.load(sys.argv[3])
assert not t.errors, t.errors[:3]
fl = t.flows(t.slices())
assert len(fl) == m["flows"] + 0, len(fl)
assert all(a["cat"] == "cuda_api" and b["cat"] == "gpu" for a, b in fl)
print("gpu: %d GPU-side slices, %d arrows, %d GPU lanes, busy counters and info as generated" %
      (len(got), len(ins), len(lanes)))
EOF

# gpuio info: counts per GPU record type, collectors, drops
"$GPUIO" info "$TMP/g.gpuio" > "$TMP/info.txt" || fail "gpuio info failed"
grep -q "^gpu records .*kernel 6, memcpy 5, memset 1, cuda_api 17" "$TMP/info.txt" || { cat "$TMP/info.txt"; fail "info: GPU record counts"; }
grep -q "^gpu drops    7 " "$TMP/info.txt" || { cat "$TMP/info.txt"; fail "info: CUPTI drops"; }
grep -q "pid 600: unavailable: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS" "$TMP/info.txt" || { cat "$TMP/info.txt"; fail "info: collector reason"; }
"$GPUIO" info --json "$TMP/g.gpuio" > "$TMP/info.json" || fail "gpuio info --json failed"
python3 - "$TMP/info.json" <<'EOF' || fail "info --json: GPU fields"
import json, sys
i = json.load(open(sys.argv[1]))
assert i["record_counts"]["gpu_kernel"] == 6 and i["record_counts"]["nvtx"] == 4, i["record_counts"]
g = i["gpu"]
assert g["cupti_dropped"] == 7 and len(g["collectors"]) == 2, g
assert g["collectors"][1]["pid"] == 600 and g["collectors"][1]["state"] == "unavailable", g
EOF

# the checker can fail: overlapping GPU lane, an arrow back in time
python3 - "$TMP/g.json" "$TMP/bad1.json" "$TMP/bad2.json" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))
k = [e for e in ev if e.get("ph") == "X" and e["name"] == "relu_kernel"][0]
gem = [e for e in ev if e.get("ph") == "X" and e["name"] == "gemm_kernel" and e["pid"] == k["pid"]][0]
k["tid"] = gem["tid"]                       # onto the lane of the kernel it overlaps
json.dump(ev, open(sys.argv[2], "w"))
ev = json.load(open(sys.argv[1]))
k = [e for e in ev if e.get("ph") == "X" and e["name"] == "relu_kernel"][0]
k["ts"] = 1000.0                            # before its launch (1099.5 us)
json.dump(ev, open(sys.argv[3], "w"))
EOF
$CHECK "$TMP/bad1.json" > "$TMP/bad1.out" 2>&1 && fail "check_trace accepts overlapping kernels on one GPU lane"
grep -q "GPU slices overlap" "$TMP/bad1.out" || { cat "$TMP/bad1.out"; fail "bad1: wrong complaint"; }
$CHECK "$TMP/bad2.json" > "$TMP/bad2.out" 2>&1 && fail "check_trace accepts an activity before its API call"
grep -q "starts before its API call" "$TMP/bad2.out" || { cat "$TMP/bad2.out"; fail "bad2: wrong complaint"; }

# two hosts: GPU tracks, lanes and arrows stay apart
"$GEN" shift "$TMP/g2.gpuio" "$TMP/g.gpuio" 5000000 0 > /dev/null || fail "gen_capture shift failed"
"$GPUIO" merge -q "$TMP/g.gpuio" "$TMP/g2.gpuio" -o "$TMP/m.json" || fail "merge to JSON failed"
"$GPUIO" merge -q "$TMP/g.gpuio" "$TMP/g2.gpuio" -o "$TMP/m.pftrace" || fail "merge to .pftrace failed"
check_struct "$TMP/m.json"
$CMP --machines "$TMP/m.json" "$TMP/m.pftrace" > "$TMP/m.cmp" 2>&1 || { cat "$TMP/m.cmp"; fail "merged JSON and protobuf differ"; }
tp_check "$TMP/m.json"
tp_check "$TMP/m.pftrace"
python3 - "$TMP/m.json" "$GPUIO_SRC/tests" <<'EOF' || fail "merge: GPU tracks"
import sys
sys.path.insert(0, sys.argv[2])
import check_trace as ct
ev = ct.load(sys.argv[1])
gp = sorted(e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"
            and " GPU " in " " + e["args"]["name"])
assert len(gp) == 4 and len(set(gp)) == 4, gp
fl = sum(1 for e in ev if e.get("flow_in") and e.get("cat") == "gpu")
assert fl == 22, fl
print("merge: %s, %d arrows" % (gp, fl))
EOF
# many launches, kernels delivered late and out of order: every kernel bound
"$GEN" gpubig "$TMP/b.gpuio" 20000 > /dev/null || fail "gen_capture gpubig failed"
"$GPUIO" convert -q "$TMP/b.gpuio" -o "$TMP/b.json" || fail "gpubig: convert to JSON failed"
"$GPUIO" convert -q "$TMP/b.gpuio" -o "$TMP/b.pftrace" || fail "gpubig: convert to .pftrace failed"
check_struct "$TMP/b.json"
$CMP "$TMP/b.json" "$TMP/b.pftrace" > "$TMP/b.cmp" 2>&1 || { cat "$TMP/b.cmp"; fail "gpubig: JSON and protobuf differ"; }
grep -q " 20000 flows" "$TMP/b.cmp" || { cat "$TMP/b.cmp"; fail "gpubig: not every kernel has its arrow"; }
echo "gpubig: $(cat "$TMP/b.cmp")"
echo "GPU records export as generated"

#!/usr/bin/env bash
# t_lost_ledger: when the ring buffer loses file calls, the kernel sums them
# (bpf/trace/ledger.bpf.h) and the report's totals per file stay exact.
#
# fio (2 jobs, 4 KiB random preads of a cached 32 MiB file, each job the
# whole file once, 8,000 reads a second each) is traced with a 1 MiB ring
# while gpuio itself is stopped (SIGSTOP) for 2 s: the ring fills and the
# kernel drops records. Ground truth is fio's JSON (total_ios, io_bytes).
# Checked:
#   - records were lost (the capture's rb_drop_vfs), and the export holds
#     fewer preads of the file than fio made (they are really gone);
#   - the capture holds LOST_CALLS records, and the report's reads and
#     bytes of the file are exactly fio's; its warning says the lost calls
#     are included, exactly (all the VFS calls lost are in the ledger), and
#     so are all the block requests lost, if any (the capture's count).
source "$(dirname "$0")/lib.sh"
need_root
command -v fio >/dev/null || skip "fio not installed"

head -c 32M /dev/urandom > "$TMP/fio.dat"
cat "$TMP/fio.dat" > /dev/null
spawn -e "$TMP/trace.err" "gpuio trace" "$GPUIO" trace --ringbuf 1M --no-sched --no-stacks \
  --capture "$TMP/c.gpuio" -o "$TMP/c.json" -- \
  fio --name=r --filename="$TMP/fio.dat" --rw=randread --bs=4k --numjobs=2 --ioengine=psync \
  --size=32M --rate_iops=8000 --output-format=json --output="$TMP/fio.json"
# fio's jobs reading: then the drain stops for 2 s
stall_tracer_during fio "$SPAWNED" "$TMP/trace.err"
cat "$TMP/trace.err"
"$GPUIO" info --json "$TMP/c.gpuio" > "$TMP/info.json" || fail "gpuio info"
"$GPUIO" report --json --files all "$TMP/c.gpuio" > "$TMP/report.json" 2> "$TMP/report.err" ||
  { cat "$TMP/report.err"; fail "gpuio report"; }
python3 - "$TMP/info.json" "$TMP/report.json" "$TMP/fio.json" "$TMP/fio.dat" "$TMP/c.json" <<'EOF' ||
import json, sys
info, rep, fio, path, export = sys.argv[1:6]
info, rep, fio = json.load(open(info)), json.load(open(rep)), json.load(open(fio))
ios = sum(j["read"]["total_ios"] for j in fio["jobs"])
nbytes = sum(j["read"]["io_bytes"] for j in fio["jobs"])
lost = info["stats"]["drops"]["rb_drop_vfs"]
ledger = info["record_counts"].get("lost_calls", 0)
ev = json.load(open(export))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
kept = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "vfs" and
           (e.get("args") or {}).get("path") == path)
f = [x for x in rep["files"] if x["path"] == path]
got = (f[0]["read_ops"], f[0]["read_bytes"]) if f else None
warn = [w for w in rep["warnings"] if "LOSSY" in json.dumps(w)]
print(f"fio: {ios} preads, {nbytes} bytes; VFS records lost {lost}, ledger records {ledger}; "
      f"the export's calls on the file {kept}; the report's reads {got}")
print(f"warning: {warn}")
bad = 0
if lost <= 0 or kept >= ios:
    print(f"FAIL: no records were lost ({lost}; {kept} of {ios} calls exported): nothing checked")
    bad += 1
if ledger <= 0:
    print("FAIL: no LOST_CALLS record in the capture")
    bad += 1
if got != (ios, nbytes):
    print(f"FAIL: the report's reads of the file {got} are not fio's ({ios}, {nbytes})")
    bad += 1
import re
w = json.dumps(warn)
m = re.search(r"include (\d+) of the (\d+) lost file calls \(exact\) and (\d+) of the (\d+) lost block requests", w)
if not m or int(m.group(2)) != lost:
    print("FAIL: the report does not say its totals include the lost file calls, exactly")
    bad += 1
elif info["stats"]["drops"]["rb_drop_block"] != int(m.group(4)) or m.group(3) != m.group(4):
    print("FAIL: the lost block requests are not all in the sums (%s of %s; the capture says %d lost)" % (
        m.group(3), m.group(4), info["stats"]["drops"]["rb_drop_block"]))
    bad += 1
sys.exit(1 if bad else 0)
EOF
  fail "the report's totals are not fio's though records were lost (FAIL lines above)"
echo "records lost, the kernel's sums kept the file's totals exact"

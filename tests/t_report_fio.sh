#!/usr/bin/env bash
# t_report_fio: `gpuio report --json` of a traced fio run agrees with fio's own
# report (--output-format=json) per file: bytes and ops read and written are
# exactly fio's io_bytes / total_ios, and the access pattern is what the job
# asked for (rw=read/write: sequential, randread/randwrite: random,
# rw=read:SKIP: strided). Every job has one file, so a job is a file.
source "$(dirname "$0")/lib.sh"
need_root
command -v fio >/dev/null || skip "fio not installed"

D="$TMP/fio"
mkdir -p "$D"
cat >"$TMP/job.fio" <<EOF
[global]
directory=$D
size=4m
ioengine=psync
invalidate=1

[seqread]
rw=read
bs=64k

[randread-direct]
rw=randread
bs=4k
direct=1

[seqwrite]
rw=write
bs=32k

[randwrite]
rw=randwrite
bs=8k

[stridedread]
rw=read:4k
bs=4k

[randread-pvsync2]
ioengine=pvsync2
rw=randread
bs=16k
EOF
fio "$TMP/job.fio" --create_only=1 --output-format=json >"$TMP/layout.json" 2>&1 \
  || { cat "$TMP/layout.json"; fail "fio layout run failed"; }
sync

"$GPUIO" trace -q --no-export --capture "$TMP/run.gpuio" -- \
  fio "$TMP/job.fio" --output-format=json --output="$TMP/fio.json" 2>"$TMP/gpuio.err" \
  || { cat "$TMP/gpuio.err"; fail "gpuio trace -- fio exited non-zero"; }
"$GPUIO" report --json --files all "$TMP/run.gpuio" >"$TMP/report.json" \
  || fail "gpuio report failed"
"$GPUIO" report "$TMP/run.gpuio" >"$TMP/report.txt" || fail "gpuio report (text) failed"
head -30 "$TMP/report.txt"

python3 - "$TMP/report.json" "$TMP/fio.json" "$D" <<'EOF' || fail "report disagrees with fio"
import json, os, sys
rep, fio, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
PATTERN = {"seqread": "sequential", "randread-direct": "random", "seqwrite": "sequential",
           "randwrite": "random", "stridedread": "strided", "randread-pvsync2": "random"}
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    bad += not cond
files = {f["path"]: f for f in rep["files"]}
check(rep["summary"]["dropped"] == 0, f"no drops ({rep['summary']['dropped']})")
for j in fio["jobs"]:
    name = j["jobname"]
    paths = [p for p in files if os.path.dirname(p) == d and os.path.basename(p).startswith(name + ".")]
    check(len(paths) == 1, f"{name}: one file in the report {paths}")
    if not paths:
        continue
    f = files[paths[0]]
    for rw in ("read", "write"):
        check(f[f"{rw}_bytes"] == j[rw]["io_bytes"] and f[f"{rw}_ops"] == j[rw]["total_ios"],
              f"{name}: {rw} {f[rw + '_bytes']} bytes / {f[rw + '_ops']} ops == fio "
              f"{j[rw]['io_bytes']} / {j[rw]['total_ios']}")
    check(f["pattern"] == PATTERN[name], f"{name}: pattern {f['pattern']} ({f['pattern_counts']}) "
          f"== {PATTERN[name]}")
    bs = j["job options"].get("bs") or fio["global options"].get("bs")
    sizes = f["request_sizes"]
    n = j["read"]["total_ios"] + j["write"]["total_ios"]
    check(len(sizes) == 1 and sizes[0]["count"] == n, f"{name}: one request size bucket ({sizes})")
    if "direct" in name:
        check(f["direct_read_bytes"] == j["read"]["io_bytes"] and f["page_cache"]["hit_ratio"] is None,
              f"{name}: O_DIRECT reads are not page-cache hits ({f['direct_read_bytes']})")
tot = rep["summary"]["vfs"]
fr = sum(j["read"]["io_bytes"] for j in fio["jobs"])
check(tot["read_bytes"] >= fr, f"VFS read total {tot['read_bytes']} >= fio's {fr}")
sys.exit(1 if bad else 0)
EOF
echo "PASS: report's per-file bytes, ops and patterns match fio's own report"

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

pycheck fio_truth.report_fio "$TMP/report.json" "$TMP/fio.json" "$D" || fail "report disagrees with fio"
echo "PASS: report's per-file bytes, ops and patterns match fio's own report"

#!/usr/bin/env bash
# t_fio_truth: a trace of fio accounts exactly for the I/O fio reports.
#
# One fio run, traced in launch mode, with sequential and random reads and
# writes, the psync, pvsync2 and sync engines, buffered and O_DIRECT, one and
# two files per job, a job with numjobs=2 and a job run as a thread. The
# files are laid out untraced first (fio --create_only=1), so the traced run
# does only the jobs' I/O. Ground truth is fio's JSON report (io_bytes and
# total_ios per job) and the files themselves:
#   - per job: bytes and calls on the job's files (JOB.N.M) in the trace ==
#     fio's io_bytes / total_ios, in the call the engine uses (psync ->
#     pread64/pwrite64, pvsync2 -> preadv2/pwritev2, sync -> read/write);
#   - per file: bytes == the file's size, every call moved bs bytes, and the
#     offsets are exactly {0, bs, 2bs, ...} each once (fio's random map visits
#     every block once; sequential jobs go in order);
#   - each job clone's calls come from one thread; O_DIRECT jobs opened their
#     files with O_DIRECT, buffered jobs without.
source "$(dirname "$0")/lib.sh"
need_root
command -v fio >/dev/null || skip "fio not installed"


D="$TMP/fio"
mkdir -p "$D"
cat >"$TMP/job.fio" <<EOF
[global]
directory=$D
size=8m
ioengine=psync
invalidate=1

[seqread-psync]
rw=read
bs=64k
nrfiles=2

[randread-psync-direct]
rw=randread
bs=4k
direct=1

[seqwrite-pvsync2]
ioengine=pvsync2
rw=write
bs=32k

[randwrite-pvsync2-direct]
ioengine=pvsync2
rw=randwrite
bs=16k
direct=1
nrfiles=2

[randread-pvsync2]
ioengine=pvsync2
rw=randread
bs=16k
nrfiles=2
numjobs=2

[randwrite-psync]
rw=randwrite
bs=8k

[seqread-sync-thread]
ioengine=sync
thread
rw=read
bs=128k
EOF

fio "$TMP/job.fio" --create_only=1 --output-format=json >"$TMP/layout.json" 2>&1 \
  || { cat "$TMP/layout.json"; fail "fio layout run failed"; }
sync

"$GPUIO" trace -q -o "$TMP/run.json" -- \
  fio "$TMP/job.fio" --output-format=json --output="$TMP/fio.json" 2>"$TMP/gpuio.err" \
  || { cat "$TMP/gpuio.err"; fail "gpuio trace -- fio exited non-zero"; }
cat "$TMP/gpuio.err"
check_struct "$TMP/run.json"

# the checker's own per-file totals, when it has them, must agree too
$CHECK files "$TMP/run.json" >"$TMP/check_files.json" 2>/dev/null || rm -f "$TMP/check_files.json"

pycheck fio_truth.fio_trace "$TMP/run.json" "$TMP/fio.json" "$D" "$TMP/check_files.json" ||
  fail "trace does not account for fio's I/O"
echo "PASS: trace accounts exactly for fio's bytes and I/Os per job and per file"

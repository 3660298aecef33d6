#!/usr/bin/env bash
# t_aio: Linux native AIO (io_submit / io_getevents), which passes no
# read/write syscall nor vfs_read, is traced with exactly the bytes the
# program moved.
#
# A. build/tests/aio_rw (raw AIO syscalls) writes 10 blocks in io_submits of
#    4 iocbs, fdsyncs, reads them with IOCB_CMD_PREAD and IOCB_CMD_PREADV
#    (reaped by io_getevents and io_pgetevents), and makes one read fail
#    (EFAULT), on a buffered file and an O_DIRECT one; it prints what it did.
#    In the default mode and in per_syscall: per file, the aio_write/aio_read/
#    aio_fdsync requests, bytes, offsets and the failure == the program's; they
#    sit on the async lanes, each starting at its io_submit and ending at an
#    io_getevents; the io_submit and io_getevents calls == the program's; the
#    O_DIRECT file's block requests are bound to its io_submits, bytes exact;
#    the report's row of each file (bytes, ops, syncs, failures) == the
#    program's; Perfetto's importer takes the trace.
#    Attach (-p): aio_rw opens its file and sets up its AIO context, then
#    waits while gpuio attaches: the same checks on its O_DIRECT file.
# B. fio's libaio engine (O_DIRECT reads and writes at iodepth 8/16, batched
#    submission, and buffered writes): per job the trace's requests == fio's
#    io_bytes and total_ios, every block of each file once, several in flight.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/aio_rw"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

BS=4096
for mode in default per_syscall; do
  d="$TMP/$mode"
  mkdir -p "$d"
  opt=()
  [ "$mode" = default ] || opt=(--vfs-mode="$mode")
  "$GPUIO" trace -q "${opt[@]}" -o "$d/run.json" -- sh -c \
    "$PROG $d/b.dat 10 $BS 4 >$d/b.dat.out && $PROG $d/d.dat 10 $BS 4 direct >$d/d.dat.out" \
    2>"$d/gpuio.err" || { cat "$d/gpuio.err" "$d"/*.out; fail "$mode: gpuio trace -- aio_rw failed"; }
  cat "$d/b.dat.out" "$d/d.dat.out"
  check_struct "$d/run.json"
  vm=$(grep -o '"vfs_mode":"[^"]*"' "$d/run.json" | head -n1)
  [ "$mode" = default ] || [[ $vm == *'"sys:each'* ]] || fail "per_syscall: traced in $vm, not sys:each"
  "$GPUIO" report --json "${d}/run.gpuio" >"$d/report.json" 2>"$d/report.err" ||
    { cat "$d/report.err"; fail "$mode: gpuio report --json failed"; }
  echo "$mode ($vm):"
  pycheck aio_truth.aio_prog "$d/run.json" "$d/report.json" "$d" "$BS" b.dat d.dat:direct ||
    fail "$mode: the trace does not account for aio_rw's AIO"
done

# attach: the target set up before gpuio, its I/O after
d="$TMP/attach"
mkdir -p "$d"
spawn -l "$d/d.dat.out" aio env AIO_RW_READY="$d/ready" AIO_RW_GO="$d/go" \
  "$PROG" "$d/d.dat" 10 "$BS" 4 direct
APID=$SPAWNED
wait_file "$d/ready"
spawn -e "$d/gpuio.err" gpuio "$GPUIO" trace -p "$APID" -o "$d/run.json"
GPID=$SPAWNED
wait_line -t 30 -F tracing "$d/gpuio.err"
touch "$d/go"
wait_exit -t 60 "$APID"
[ "$EXIT_STATUS" = 0 ] || { cat "$d/d.dat.out"; fail "attach: aio_rw failed"; }
wait_exit -t 30 "$GPID"
[ "$EXIT_STATUS" = 0 ] || { cat "$d/gpuio.err"; fail "attach: gpuio trace -p exited $EXIT_STATUS"; }
cat "$d/d.dat.out"
check_struct "$d/run.json"
"$GPUIO" report --json "$d/run.gpuio" >"$d/report.json" 2>"$d/report.err" ||
  { cat "$d/report.err"; fail "attach: gpuio report --json failed"; }
echo "attach (-p):"
pycheck aio_truth.aio_prog "$d/run.json" "$d/report.json" "$d" "$BS" d.dat:direct ||
  fail "attach: the trace does not account for aio_rw's AIO"

command -v fio >/dev/null || skip "fio not installed: part B (fio's libaio engine) not run"
fio --enghelp 2>/dev/null | grep -qw libaio || skip "this fio has no libaio engine: part B not run"
D="$TMP/fio"
mkdir -p "$D"
cat >"$TMP/job.fio" <<EOF
[global]
directory=$D
size=2m
ioengine=libaio

[randread-direct]
rw=randread
bs=4k
direct=1
iodepth=8

[randwrite-direct-batch]
rw=randwrite
bs=16k
direct=1
iodepth=16
iodepth_batch_submit=4
iodepth_batch_complete_min=2

[seqwrite-buffered]
rw=write
bs=8k
iodepth=4
EOF
fio "$TMP/job.fio" --create_only=1 --output-format=json >"$TMP/layout.json" 2>&1 ||
  { cat "$TMP/layout.json"; fail "fio layout run failed"; }
sync
"$GPUIO" trace -q -o "$TMP/fio_run.json" -- \
  fio "$TMP/job.fio" --output-format=json --output="$TMP/fio.json" 2>"$TMP/gpuio.err" ||
  { cat "$TMP/gpuio.err"; fail "gpuio trace -- fio (libaio) failed"; }
check_struct "$TMP/fio_run.json"
pycheck aio_truth.fio_libaio "$TMP/fio_run.json" "$TMP/fio.json" "$D" ||
  fail "the trace does not account for fio's libaio I/O"
echo "PASS: AIO requests, their io_submits and io_getevents, bytes and failures exact (aio_rw, fio libaio)"

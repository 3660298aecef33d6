#!/usr/bin/env bash
# t_timestamps: slice times are CLOCK_MONOTONIC, exact to the nanosecond, and
# block requests are tied only to the calls that caused them.
#
# build/tests/attach_reader reads CLOCK_MONOTONIC just before and just after
# each pread and logs both (ns). The file is dropped from the page cache
# first, so the first reads go to the disk. The log is on tmpfs, so the
# reader itself never writes to a disk. Meanwhile the test (untraced) writes
# and syncs a file on the same disk as the data. Ground truth: the logged
# windows, and the fact that the reader only reads. Checks, for all 200
# reads:
#   - t = monotonic_base_ns + ts*1000 (the trace info's base) puts each
#     read's slice [ts, ts+dur] inside its logged window, to the ns;
#   - the slices are in the same order as the log;
#   - every block request on the reader's pid is a read (page-fault reads of
#     its binary need not be joined to a call); those joined (flow) to one of
#     its reads were submitted inside that read's window; none of the test's
#     untraced writes (or its file) is attributed to the reader.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/attach_reader"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not a tmpfs (the reader's log must not touch a disk)"

SHM=$(mktemp -d /dev/shm/gpuio-test.XXXXXX)
on_exit 'rm -rf "$SHM"'

head -c $((4 << 20)) /dev/urandom >"$TMP/data.bin"
sync "$TMP/data.bin"
# untraced writer: once the reader is under way, write and sync another file
(
  poll -t 2 -i 0.01 test -s "$SHM/reads.log" || true
  dd if=/dev/urandom of="$TMP/other.bin" bs=64k count=64 conv=fsync status=none
  sync
) &
BG=$!
proc_reg "$BG" "the untraced writer"
"$GPUIO" trace -q -o "$TMP/run.json" -- \
  sh -c '"$0" "$1" "$2" 500 200 cold && sleep 1.5' "$PROG" "$TMP/data.bin" "$SHM/reads.log" 2>"$TMP/gpuio.err" \
  || { cat "$TMP/gpuio.err"; fail "gpuio trace -- attach_reader exited non-zero"; }
wait "$BG" || fail "the untraced writer failed"
proc_unreg "$BG"
check_struct "$TMP/run.json"

pycheck reader_log.timestamps "$TMP/run.json" "$SHM/reads.log" "$TMP/data.bin" "$TMP/other.bin" ||
  fail "slice times or block attribution wrong"
echo "PASS: every read's slice lies inside the CLOCK_MONOTONIC window the program measured"

#!/usr/bin/env bash
# t_writeback: writeback I/O is attributed to the process that dirtied it.
#
# build/tests/wb_writer (traced, launch mode) writes 8 MiB to a file on an
# ext4 image on a loop device with buffered write(2)s and no sync, then
# waits. The test (untraced) runs `sync` while gpuio still traces, then lets
# the writer exit. Ground truth: the writer's pid (it prints it), the file,
# its size, and the time the test started `sync`. Checks:
#   - the writer's write(2)s on the file sum to 8 MiB;
#   - block write requests on the loop disk with args.pid == the writer,
#     writeback == true and path == the file add up to >= 8 MiB;
#   - all of them were submitted after the test started `sync` (it is the
#     test's sync that wrote them back, not the writer's own calls).
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/wb_writer"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"

LOOP=""
MNT="$TMP/mnt"
# at exit: gpuio (still tracing if the test failed early) gets SIGTERM and
# passes it to the writer; then the image is unmounted and detached
on_exit '[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null'
on_exit 'mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"'

truncate -s 128M "$TMP/img"
mkfs.ext4 -q -F -b 4096 "$TMP/img" || fail "mkfs.ext4 failed"
LOOP=$(losetup -f --show "$TMP/img") || skip "no loop device available (losetup -f failed)"
mkdir -p "$MNT"
mount -o noatime "$LOOP" "$MNT" || fail "mount $LOOP failed"
DISK=$(basename "$LOOP")
SIZE=$((8 << 20))

spawn -e "$TMP/gpuio.err" gpuio \
  "$GPUIO" trace -q -o "$TMP/run.json" -- "$PROG" "$MNT/dirty.bin" "$SIZE" "$TMP/ready" "$TMP/go"
GPID=$SPAWNED
wait_file -f "$TMP/gpuio.err" -m "wb_writer never got ready" "$TMP/ready"
WPID=$(cat "$TMP/ready")
T_SYNC=$(python3 -c 'import time; print(time.monotonic_ns())')
sync
sleep 0.2
touch "$TMP/go"
rc=0; wait "$GPID" || rc=$?
proc_unreg "$GPID"
cat "$TMP/gpuio.err"
[ "$rc" -eq 0 ] || fail "gpuio trace -- wb_writer exited $rc"
check_struct "$TMP/run.json"

pycheck io_truth.writeback "$TMP/run.json" "$MNT/dirty.bin" "$DISK" "$WPID" "$SIZE" "$T_SYNC" ||
  fail "writeback not attributed to the writer"
echo "PASS: writeback by an untraced sync is attributed to the writer, with the file and writeback: true"

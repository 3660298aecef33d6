#!/usr/bin/env bash
# t_monitor_paths: `gpuio monitor` counts the calls that move file data by
# another path than read/write: sendfile, copy_file_range and splice (a read
# of the source and a write of the destination, each where it is a file),
# Linux AIO (each iocb's bytes when io_getevents reaps it) and io_uring
# (each read or write request's bytes at its completion).
#
# build/tests/sc_all (every traced file syscall once, with what it moved
# printed) runs in its own cgroup on an ext4 image on a loop device; the
# cgroup's read and write ops and bytes on that device equal what sc_all's
# successful calls moved on files (pipes are not file I/O). build/tests/aio_rw
# (buffered and O_DIRECT, in a second cgroup): its cgroup's read and write
# ops and bytes equal the requests it printed (the one failing read counts
# nothing, as failed calls do not). build/tests/uring_rw in a third cgroup:
# its io_uring writes, reads and vectored reads, the same way.
source "$(dirname "$0")/lib.sh"
need_root
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"
PROG="$GPUIO_TESTS/sc_all"
AIO="$GPUIO_TESTS/aio_rw" URING="$GPUIO_TESTS/uring_rw"
[ -x "$PROG" ] && [ -x "$AIO" ] && [ -x "$URING" ] || fail "$PROG, $AIO or $URING missing (make test-progs)"
source "$(dirname "$0")/monitor_lib.sh"

mount_loop_ext4 32M
mkdir -p "$TMP/mnt/sc"

CG=$(mk_cgroup "gpuio-test-paths-$$")
CG2=$(mk_cgroup "gpuio-test-aio-$$")
CG3=$(mk_cgroup "gpuio-test-uring-$$")
mon_start --window 0 --listen "127.0.0.1:$MON_PORT"
# its expectations go to $TMP (another device): only its calls on the image count
start_in_cgroup "$CG" sh -c 'exec "$1" "$2" > "$3"' sh "$PROG" "$TMP/mnt/sc" "$TMP/expect.jsonl"
wait_exit -t 60 "$CGPID"
[ "$EXIT_STATUS" = 0 ] || fail "sc_all failed"
start_in_cgroup "$CG2" sh -c '"$1" "$2/b.dat" 10 4096 4 > "$3.b" && "$1" "$2/d.dat" 10 4096 4 direct > "$3.d"' \
  sh "$AIO" "$TMP/mnt/sc" "$TMP/aio.out"
wait_exit -t 60 "$CGPID"
[ "$EXIT_STATUS" = 0 ] || fail "aio_rw failed"
cat "$TMP/aio.out.b" "$TMP/aio.out.d"
start_in_cgroup "$CG3" sh -c 'exec "$1" "$2/u.dat" 8 4096 > "$3"' sh "$URING" "$TMP/mnt/sc" "$TMP/uring.out"
wait_exit -t 60 "$CGPID"
[ "$EXIT_STATUS" = 0 ] || fail "uring_rw failed"
cat "$TMP/uring.out"
sleep 2.2     # cgroup names are rescanned at most every 2 s
scrape "$TMP/m.txt"
mon_stop
pycheck monitor.metrics_paths "$TMP/m.txt.json" "/${CG#$CGV2/}" "$DEV" "$TMP/mnt" "$TMP/expect.jsonl" ||
  fail "/metrics does not count sc_all's file I/O by every path"
pycheck monitor.metrics_async "$TMP/m.txt.json" "/${CG2#$CGV2/}" "$DEV" "$TMP/mnt" "$TMP/aio.out.b" "$TMP/aio.out.d" ||
  fail "/metrics does not count aio_rw's AIO"
pycheck monitor.metrics_async "$TMP/m.txt.json" "/${CG3#$CGV2/}" "$DEV" "$TMP/mnt" "$TMP/uring.out" ||
  fail "/metrics does not count uring_rw's io_uring requests"
echo "PASS: sendfile, copy_file_range and splice counted on both files, AIO when reaped, io_uring when complete, bytes exact"

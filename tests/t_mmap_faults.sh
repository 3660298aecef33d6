#!/usr/bin/env bash
# t_mmap_faults: files read only through a mapping (page faults) are traced
# as I/O, exactly as the program itself measured them.
#
# Three 16 MiB files on ext4 on a loop device, cold (written, then the
# filesystem unmounted and mounted again: its page cache is gone). Traced,
# build/tests/mmap_touch maps each and reads one byte of every page, twice:
# pass 0 cold, pass 1 warm. The first file is MADV_RANDOM (no readahead:
# every page its own major fault), the two others the default (readahead,
# fault-around). Around each touch loop the program reads its own fault
# counters (getrusage), CLOCK_MONOTONIC and mincore. Checks
# (tests/checks/mmap_truth.py):
#   - every page_fault slice lies inside its file's touch loop window;
#   - per loop, the slices' bytes = what mincore says the loop brought in
#     (16 MiB cold, 0 warm), and the slices the kernel counted major =
#     the loop's majflt (the others waited for a page another fault was
#     reading, or started readahead);
#   - cold: the pages brought in (readahead_offset + bytes) cover every page
#     of each file once; for the MADV_RANDOM file one 4 KiB major fault per
#     page, at every page's offset;
#   - every block request of the files is flow-bound to a fault of the
#     program on the same file, and carries exactly that fault's bytes;
#   - minor and major counts per file (trace info and report) = the
#     program's minflt and majflt over its loops of that file;
#   - the report's file rows read_bytes = 16 MiB each (48 MiB);
#   - both exports pass the checker and Perfetto's importer;
# in each mode of the layer this kernel has (GPUIO_FAULT_MODE): tp_btf (the
# filemap events name a fault's file), tp_btf:vma (the older kernels' lookup
# at each fault's entry) and raw_tp.
# Then the same files with --no-faults: no page_fault slice, no counts, the
# fault layer "off" in the header. First, the synthetic capture of
# `gen_capture faults`: every page_fault slice's args and flows, the counts
# per file (cumulative records of two processes) in the trace info, the
# report (text's numbers by JSON) and `gpuio info`, exactly as generated.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/mmap_touch"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

"$GPUIO_TESTS/gen_capture" faults "$TMP/gen.gpuio" >"$TMP/gen.manifest" || fail "gen_capture faults failed"
"$GPUIO" convert -q "$TMP/gen.gpuio" -o "$TMP/gen.json" || fail "gen: convert to JSON failed"
"$GPUIO" convert -q "$TMP/gen.gpuio" -o "$TMP/gen.pftrace" || fail "gen: convert to .pftrace failed"
"$GPUIO" report --json --files all "$TMP/gen.gpuio" >"$TMP/gen.report.json" || fail "gen: report failed"
"$GPUIO" report --html "$TMP/gen.html" "$TMP/gen.gpuio" || fail "gen: report --html failed"
grep -q "<th>minor faults</th>" "$TMP/gen.html" || fail "gen: no fault columns in the HTML files table"
"$GPUIO" info --json "$TMP/gen.gpuio" >"$TMP/gen.info.json" || fail "gen: info failed"
check_struct "$TMP/gen.json"
check_struct "$TMP/gen.pftrace"
pycheck mmap_truth.synthetic "$TMP/gen.manifest" "$TMP/gen.json" "$TMP/gen.report.json" \
  "$TMP/gen.info.json" || fail "gen_capture faults: the exports or the report differ from it"

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"

LOOP=""
MNT="$TMP/mnt"
on_exit '[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null'
on_exit 'mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"'

truncate -s 128M "$TMP/img"
mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$TMP/img" || fail "mkfs.ext4 failed"
LOOP=$(losetup -f --show "$TMP/img") || skip "no loop device available (losetup -f failed)"
mkdir -p "$MNT"
mount -o noatime "$LOOP" "$MNT" || fail "mount $LOOP failed"
for i in 0 1 2; do
  head -c $((16 << 20)) /dev/urandom >"$MNT/f$i" || fail "writing $MNT/f$i failed"
done
sync

cold() {  # the filesystem's page cache gone: unmount, mount again
  umount "$MNT" || fail "umount $MNT failed"
  mount -o noatime "$LOOP" "$MNT" || fail "mount $LOOP again failed"
}

# the layer's modes on this kernel: the filemap events name the file (best),
# the older kernels' lookup at each fault's entry, raw_tp
for mode in tp_btf tp_btf:vma raw_tp; do
  echo "== fault mode $mode"
  for try in 1 2; do
    cold
    rc=0
    GPUIO_FAULT_MODE=$mode "$GPUIO" trace -q -o "$TMP/run.json" --capture "$TMP/run.gpuio" -- \
      "$PROG" 2 "random:$MNT/f0" "$MNT/f1" "$MNT/f2" >"$TMP/touch.out" 2>"$TMP/gpuio.err" || rc=$?
    # 3: the kernel reclaimed a touched page during the run (mincore's counts
    # are then no ground truth): once more, said so
    [ $rc -eq 3 ] && [ $try -eq 1 ] && { echo "   a page was reclaimed during the run; again"; continue; }
    [ $rc -eq 0 ] || { cat "$TMP/gpuio.err" "$TMP/touch.out"; fail "$mode: gpuio trace -- mmap_touch exited $rc"; }
    break
  done
  cat "$TMP/touch.out"
  "$GPUIO" info "$TMP/run.gpuio" | has "fault=$mode\b" || fail "$mode: not the mode the capture says"
  "$GPUIO" report --json --files all "$TMP/run.gpuio" >"$TMP/report.json" || fail "gpuio report failed"
  if [ "$mode" = tp_btf ]; then
    "$GPUIO" convert -q "$TMP/run.gpuio" -o "$TMP/run.pftrace" || fail "convert to .pftrace failed"
    check_struct "$TMP/run.json"
    check_struct "$TMP/run.pftrace"
  fi
  pycheck mmap_truth.faults "$TMP/run.json" "$TMP/touch.out" "$TMP/report.json" ||
    fail "$mode: page faults do not match what mmap_touch measured"
done

# the layer off: nothing of it, and the header says so
cold
"$GPUIO" trace -q --no-faults -o "$TMP/off.json" --capture "$TMP/off.gpuio" -- \
  "$PROG" 1 "$MNT/f1" >"$TMP/off.out" 2>"$TMP/off.err" ||
  { cat "$TMP/off.err"; fail "gpuio trace --no-faults exited non-zero"; }
grep -q '"page_fault"' "$TMP/off.json" && fail "--no-faults: page_fault slices in the export"
grep -q '"page_faults"' "$TMP/off.json" && fail "--no-faults: fault counts in the trace info"
"$GPUIO" info --json "$TMP/off.gpuio" | python3 -c '
import json, sys
sys.exit(0 if json.load(sys.stdin)["modes"]["fault"] == "off" else 1)' ||
  fail "--no-faults: the header does not say fault=off"
echo "PASS: page faults on file mappings equal what mmap_touch measured of itself"

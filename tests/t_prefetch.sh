#!/usr/bin/env bash
# t_prefetch: prefetch hints (posix_fadvise, readahead, madvise WILLNEED) and
# whether the reads after them found their pages cached, against the page
# cache's own answer.
#
# build/tests/prefetch_hints: four 4 MiB files on disk, each written, synced,
# dropped (POSIX_FADV_DONTNEED, checked by mincore), set POSIX_FADV_RANDOM,
# hinted on its first 2 MiB (fadvise WILLNEED, readahead, madvise WILLNEED on
# a mapping; the fourth dropped again before its reads: a wasted hint), then
# read in 256 KiB preads with mincore before each. In the default mode and
# per_syscall: each file's hint calls in order with their advice, offset and
# length; the report's per-file prefetch counts (hints, bytes hinted, reads
# into the range, those that found every page cached, the pages still read)
# equal the program's; a headline says it.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/prefetch_hints"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

for mode in default per_syscall; do
  d="$TMP/$mode"
  opt=()
  [ "$mode" = default ] || opt=(--vfs-mode="$mode")
  # exit 3: the kernel kept pages it was told to drop, or never read the
  # hinted ones (memory pressure): nothing to compare, so again
  for try in 1 2 3; do
    rm -rf "$d"; mkdir -p "$d"
    rc=0
    "$GPUIO" trace -q "${opt[@]}" -o "$d/run.json" -- "$PROG" "$d" >"$d/prog.out" 2>"$d/gpuio.err" || rc=$?
    [ $rc -eq 3 ] && { echo "   the page cache did not settle (try $try); again"; continue; }
    break
  done
  [ $rc -eq 0 ] || { cat "$d/gpuio.err" "$d/prog.out"; fail "$mode: gpuio trace -- prefetch_hints exited $rc"; }
  cat "$d/prog.out"
  check_struct "$d/run.json"
  "$GPUIO" report --json "$d/run.gpuio" >"$d/report.json" 2>"$d/report.err" ||
    { cat "$d/report.err"; fail "$mode: gpuio report --json failed"; }
  echo "$mode ($(grep -o '"vfs_mode":"[^"]*"' "$d/run.json" | head -n1)):"
  pycheck io_truth.prefetch "$d/run.json" "$d/report.json" "$d/prog.out" "$d" ||
    fail "$mode: the hints or the reads after them do not match the program's"
done
echo "PASS: prefetch hints named with their ranges; reads after them, cached or not, as mincore said"

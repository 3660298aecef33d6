#!/usr/bin/env bash
# t_pagecache: cache_miss_pages says how much of a read came from the disk.
#
# build/tests/pc_read drops a synced 16 MiB file from the page cache
# (posix_fadvise DONTNEED), reads it whole with pread64 (cold), then again
# with read(2) (warm), and reports — from mincore(2), not from gpuio — how
# many of the file's pages were resident before each pass. Checks:
#   - cold pass: the preads' cache_miss_pages sum to >= 90% of the pages
#     that were not resident, and to no more than the file's pages;
#   - warm pass (every page resident, per mincore): the reads' sum is 0;
#   - every read slice carries cache_miss_pages.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/pc_read"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"


head -c $((16 << 20)) /dev/urandom >"$TMP/data.bin"
sync "$TMP/data.bin"
"$GPUIO" trace -q -o "$TMP/run.json" -- "$PROG" "$TMP/data.bin" >"$TMP/pc.out" 2>"$TMP/gpuio.err" \
  || { cat "$TMP/gpuio.err"; fail "gpuio trace -- pc_read exited non-zero"; }
cat "$TMP/pc.out"
check_struct "$TMP/run.json"

pycheck io_truth.pagecache "$TMP/run.json" "$TMP/pc.out" "$TMP/data.bin" ||
  fail "cache_miss_pages does not match the page cache"
echo "PASS: cache_miss_pages counts the cold pages and is zero when cached"

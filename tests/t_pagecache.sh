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

python3 - "$TMP/run.json" "$TMP/pc.out" "$TMP/data.bin" <<'EOF' || fail "cache_miss_pages does not match the page cache"
import os, sys
sys.path.insert(0, os.environ.get("GPUIO_SRC", ".") + "/tests")
import truth
trace, outf, data = sys.argv[1:]
truth_ = dict(kv.split("=") for kv in open(outf).read().split())
pages, r1, r2 = int(truth_["pages"]), int(truth_["resident_before_pass1"]), int(truth_["resident_before_pass2"])
ev = truth.load(trace)
path = os.path.realpath(data)
cold = truth.vfs(ev, path=path, names={"pread64"})
warm = truth.vfs(ev, path=path, names={"read"})
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    bad += not cond
check(cold and warm, f"{len(cold)} cold preads, {len(warm)} warm reads traced")
check(all("cache_miss_pages" in e["args"] for e in cold + warm), "every read carries cache_miss_pages")
c = sum(e["args"].get("cache_miss_pages", 0) for e in cold)
w = sum(e["args"].get("cache_miss_pages", 0) for e in warm)
need = pages - r1
check(need > 0.9 * pages, f"mincore: {r1} of {pages} pages resident before the cold pass (fadvise worked)")
check(0.9 * need <= c <= pages, f"cold pass: cache_miss_pages sum {c}, {need} pages were not cached "
      f"(want {int(0.9 * need)}..{pages})")
check(r2 == pages, f"mincore: {r2} of {pages} pages resident before the warm pass")
check(w == 0, f"warm pass: cache_miss_pages sum {w} (want 0)")
sys.exit(1 if bad else 0)
EOF
echo "PASS: cache_miss_pages counts the cold pages and is zero when cached"

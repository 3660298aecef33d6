#!/usr/bin/env bash
# t_report_errors: `gpuio report` on awkward input says what it is, never
# crashes: an empty capture (header only), a capture without GPU records, a
# truncated one (reported up to the cut, with a warning), a corrupt one and
# a non-capture (refused, exit 1, the offset named), a directory of captures
# (each reported; JSON: an array; --html: refused), an empty directory, and
# many small files read once (the sharding recommendation).
source "$(dirname "$0")/lib.sh"
export GPUIO_SRC
GEN="python3 $GPUIO_SRC/tests/report_gen.py"

# empty
$GEN empty "$TMP/empty.gpuio"
"$GPUIO" report "$TMP/empty.gpuio" >"$TMP/empty.txt" || fail "empty capture: non-zero exit"
grep -q "holds no records" "$TMP/empty.txt" || fail "empty capture: not said"
"$GPUIO" report --json "$TMP/empty.gpuio" | pycheck report_truth.errors_empty || fail "empty capture: JSON"
echo "ok   empty capture"

# no GPU records (and small files: sharding)
$GEN small "$TMP/small.gpuio"
"$GPUIO" report "$TMP/small.gpuio" >"$TMP/small.txt" || fail "small: report failed"
grep -q "no GPU activity records" "$TMP/small.txt" || fail "no-GPU capture: not said"
"$GPUIO" report --json "$TMP/small.gpuio" | pycheck report_truth.errors_small || fail "small files: JSON"
echo "ok   capture without GPU records; 200 small files -> shard recommendation"

# truncated: cut inside the last records
$GEN gpu-idle "$TMP/full.gpuio"
size=$(stat -c %s "$TMP/full.gpuio")
head -c $((size - 100)) "$TMP/full.gpuio" >"$TMP/cut.gpuio"
"$GPUIO" report "$TMP/cut.gpuio" >"$TMP/cut.txt" || fail "truncated: non-zero exit"
grep -q "capture cut short at offset" "$TMP/cut.txt" || fail "truncated: no warning"
"$GPUIO" report --json "$TMP/cut.gpuio" | pycheck report_truth.errors_truncated || fail "truncated: JSON"
echo "ok   truncated capture reported up to the cut"

# corrupt: the first record's size field becomes 3
cp "$TMP/full.gpuio" "$TMP/bad.gpuio"
printf '\x03\x00' | dd of="$TMP/bad.gpuio" bs=1 seek=2026 conv=notrunc status=none
rc=0; "$GPUIO" report "$TMP/bad.gpuio" >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
[ "$rc" -eq 1 ] || fail "corrupt: exit $rc, want 1"
grep -q "corrupt record at offset 2024" "$TMP/bad.err" || { cat "$TMP/bad.err"; fail "corrupt: no offset"; }
echo "ok   corrupt capture refused: $(cat "$TMP/bad.err")"

echo "not a capture" >"$TMP/junk.gpuio"
rc=0; "$GPUIO" report "$TMP/junk.gpuio" 2>"$TMP/junk.err" >/dev/null || rc=$?
[ "$rc" -eq 1 ] && [ -s "$TMP/junk.err" ] || fail "non-capture: exit $rc"
echo "ok   non-capture refused: $(cat "$TMP/junk.err")"

# a directory of captures
mkdir "$TMP/dir" "$TMP/emptydir"
cp "$TMP/full.gpuio" "$TMP/dir/a.gpuio"
cp "$TMP/small.gpuio" "$TMP/dir/b.gpuio"
"$GPUIO" report "$TMP/dir" >"$TMP/dir.txt" || fail "directory: report failed"
[ "$(grep -c '^gpuio report: ' "$TMP/dir.txt")" -eq 2 ] || fail "directory: not both captures reported"
"$GPUIO" report --json "$TMP/dir" | pycheck report_truth.errors_dir || fail "directory: JSON is not an array of both"
rc=0; "$GPUIO" report --html "$TMP/x.html" "$TMP/dir" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] && [ ! -e "$TMP/x.html" ] || fail "directory + --html: exit $rc, want 2"
rc=0; "$GPUIO" report "$TMP/emptydir" 2>"$TMP/ed.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "without captures" "$TMP/ed.err" || fail "empty directory: exit $rc"
echo "ok   directory: each capture reported; --html refused; empty directory refused"
echo "PASS: report handles empty, GPU-less, truncated, corrupt, non-capture and directory input"

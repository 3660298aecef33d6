#!/usr/bin/env bash
# t_same_outputs — the refactoring gate: every output this tree's gpuio
# makes (convert to JSON and .pftrace, report text/--json/--html/--files all,
# info text/--json, merge) is byte-identical to the reference build's
# (tests/same_outputs.ref: a git revision, built here from `git archive`),
# on the same captures: the fuzz corpus, every synthetic capture
# gen_capture makes, the saved H200 captures (tests/gpu/runs), the demo
# workload traced now, and a real PyTorch DataLoader loop traced now.
# Skipped where the tree is not a git checkout holding that revision.
# Captures holding record kinds the reference does not decode (it counts
# them unknown; socket peers, say) show new things on purpose: they are
# named and left out. The traces made now use --no-sockets for the same
# reason (a PyTorch loop's workers talk over unix sockets).
source "$(dirname "$0")/lib.sh"
need_root
pin=$GPUIO_SRC/tests/same_outputs.ref
rev=$(awk '$1 == "rev" { print $2 }' "$pin")
skip_fam=$(awk '$1 == "changed" { printf "%s ", $2 }' "$pin")
[ -n "$rev" ] || fail "$pin names no rev"
git -C "$GPUIO_SRC" rev-parse -q --verify "$rev^{commit}" >/dev/null 2>&1 ||
  skip "reference revision ${rev:0:12} is not in this checkout (a tarball or a shallow clone)"
echo "reference: $(git -C "$GPUIO_SRC" log -1 --format='%h %s' "$rev")"
[ -n "$skip_fam" ] && echo "not compared (changed on purpose, $pin): $skip_fam"

# the reference build, from the revision's own files
mkdir -p "$TMP/ref" "$TMP/caps"
git -C "$GPUIO_SRC" archive "$rev" | tar -x -C "$TMP/ref"
# its gen_capture too: synthetic captures written by the reference's own
# record layouts, so that both builds read the same bytes
make -C "$TMP/ref" -j"$(nproc)" build/gpuio build/tests/gen_capture > "$TMP/ref-build.log" 2>&1 ||
  { tail -20 "$TMP/ref-build.log"; fail "the reference revision does not build"; }

# the captures
caps=("$GPUIO_SRC"/tests/fuzz/corpus/*.gpuio)
for mode in basic hostile flows gpu "gpubig 3000" gpuwait states "big 20000" truncate corrupt; do
  m=${mode%% *}
  # shellcheck disable=SC2086 # the mode's argument
  "$TMP/ref/build/tests/gen_capture" $m "$TMP/caps/gen-$m.gpuio" ${mode#$m} > /dev/null 2>&1 ||
    fail "gen_capture $mode"
  caps+=("$TMP/caps/gen-$m.gpuio")
done
"$TMP/ref/build/tests/gen_capture" shift "$TMP/caps/gen-shift.gpuio" "$TMP/caps/gen-basic.gpuio" \
  1000000 2000000 > /dev/null 2>&1 || fail "gen_capture shift"
caps+=("$TMP/caps/gen-shift.gpuio")
# a whole-node capture (16 CPUs, 71 threads, wake-ups a little out of
# order): this tree's gen_capture when the reference's has no scale mode
gen=$TMP/ref/build/tests/gen_capture
"$gen" scale "$TMP/caps/gen-scale.gpuio" 300000 > /dev/null 2>&1 || gen=$GPUIO_TESTS/gen_capture
"$gen" scale "$TMP/caps/gen-scale.gpuio" 300000 > /dev/null 2>&1 || fail "gen_capture scale"
caps+=("$TMP/caps/gen-scale.gpuio")
for z in "$GPUIO_SRC"/tests/gpu/runs/*/*.gpuio.gz; do
  [ -e "$z" ] || continue
  b=$(basename "$(dirname "$z")")-$(basename "$z" .gz)
  gzip -dc "$z" > "$TMP/caps/$b"
  caps+=("$TMP/caps/$b")
done
"$GPUIO" trace -q --no-export --no-sockets --capture "$TMP/caps/demo.gpuio" -- \
  "$GPUIO_TESTS/demo_loader" "$TMP/demo-data" 2 2 > "$TMP/demo.log" 2>&1 ||
  { cat "$TMP/demo.log"; fail "tracing the demo workload"; }
caps+=("$TMP/caps/demo.gpuio")
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  source "$GPUIO_SRC/tests/torch_lib.sh"
  torch_cpu_bound "$TMP/torch.json" "$GPUIO" trace -q --no-export --no-sockets \
    --capture "$TMP/caps/torch-cpu.gpuio" -- > "$TMP/torch.log" 2>&1 ||
    { cat "$TMP/torch.log"; fail "tracing the PyTorch loop"; }
  caps+=("$TMP/caps/torch-cpu.gpuio")
else
  echo "note: no PyTorch (python3-torch): the real PyTorch capture is left out"
fi
# unknown_records BIN CAPTURE: what BIN's info counts as unknown record kinds ("" when it cannot)
unknown_records() {
  "$1" info --json "$2" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["record_counts"]["unknown"])' \
    2>/dev/null || true
}
keep=()
for c in "${caps[@]}"; do
  ur=$(unknown_records "$TMP/ref/build/gpuio" "$c")
  un=$(unknown_records "$GPUIO" "$c")
  if [ -n "$ur" ] && [ -n "$un" ] && [ "$ur" -gt "$un" ]; then
    echo "not compared: $(basename "$c") holds $((ur - un)) records of kinds newer than the reference"
  else
    keep+=("$c")
  fi
done
caps=("${keep[@]}")
echo "${#caps[@]} captures"
SAME_OUTPUTS_SKIP="$skip_fam" bash "$GPUIO_SRC/tests/same_outputs.sh" \
  "$TMP/ref/build/gpuio" "$GPUIO" "$TMP/cmp" "${caps[@]}" ||
  { [ -n "${SAME_OUTPUTS_KEEP:-}" ] && cp -r "$TMP/cmp" "$SAME_OUTPUTS_KEEP"; fail "outputs differ from the reference build's (${rev:0:12}); if on purpose, say so in $pin"; }

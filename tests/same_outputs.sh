#!/usr/bin/env bash
# tests/same_outputs.sh REF_GPUIO NEW_GPUIO OUTDIR CAPTURE... — every output
# two gpuio builds make of the same captures, compared byte for byte.
#
# For each capture: convert to .json and .pftrace, report (text, --json,
# --html), info (text, --json); and one merge of the first two mergeable
# captures. Outputs go to OUTDIR/ref and OUTDIR/new with the same names; the
# exit status is 0 when every file is the same (and each command exited the
# same way), 1 otherwise, with one line per difference. A capture that a
# build rejects is compared by its exit status and its stderr.
#
# SAME_OUTPUTS_SKIP="report info" leaves those families out of the
# comparison (convert, report, info, merge): outputs a commit changes on
# purpose (tests/same_outputs.ref).
#
# Used by tests/t_same_outputs.sh (the refactoring gate) and by hand:
#   tests/same_outputs.sh /tmp/ref/build/gpuio build/gpuio /tmp/cmp corpus/*.gpuio
set -u
REF=$(readlink -f "$1") NEW=$(readlink -f "$2") OUT=$3
shift 3
rm -rf "$OUT" && mkdir -p "$OUT/ref" "$OUT/new" || exit 2
# the capture's own path is in the outputs (report, info): the same link for both
link=$OUT/cap
mkdir -p "$link"
run() {  # SIDE BIN NAME CMD...: stdout to NAME.out, stderr to NAME.err, status to NAME.rc
  local side=$1 bin=$2 name=$3
  shift 3
  (cd "$OUT/$side" && "$bin" "$@" > "$name.out" 2> "$name.err"; echo $? > "$name.rc")
}
n=0
for cap in "$@"; do
  b=$(basename "$cap" .gpuio)
  ln -sf "$(cd "$(dirname "$cap")" && pwd)/$(basename "$cap")" "$link/$b.gpuio"
  c=$link/$b.gpuio
  for side in ref new; do
    bin=$REF
    [ "$side" = new ] && bin=$NEW
    run "$side" "$bin" "$b.convert-json" convert -q "$c" -o "$b.json"
    run "$side" "$bin" "$b.convert-pf" convert -q "$c" -o "$b.pftrace"
    run "$side" "$bin" "$b.report" report "$c"
    run "$side" "$bin" "$b.report-json" report --json "$c"
    run "$side" "$bin" "$b.report-all" report --files all "$c"
    run "$side" "$bin" "$b.report-html" report --html "$b.html" "$c"
    run "$side" "$bin" "$b.info" info "$c"
    run "$side" "$bin" "$b.info-json" info --json "$c"
  done
  n=$((n + 1))
done
# one merge of two captures that both export (gpuio merge CAP... -o OUT)
merge=()
for cap in "$@"; do
  b=$(basename "$cap" .gpuio)
  [ "$(cat "$OUT/ref/$b.convert-json.rc")" = 0 ] && merge+=("$link/$b.gpuio")
  [ ${#merge[@]} -eq 2 ] && break
done
if [ ${#merge[@]} -eq 2 ]; then
  for side in ref new; do
    bin=$REF
    [ "$side" = new ] && bin=$NEW
    run "$side" "$bin" merge-json merge "${merge[@]}" -o merged.json
    run "$side" "$bin" merge-pf merge "${merge[@]}" -o merged.pftrace
  done
fi
# the family of an output file: NAME.report-json.out -> report, NAME.json -> convert
family() {
  case $1 in
    merge*) echo merge ;;
    *.report*|*.html) echo report ;;
    *.info*) echo info ;;
    *) echo convert ;;
  esac
}
skipped() { case " ${SAME_OUTPUTS_SKIP:-} " in *" $(family "$1") "*) return 0 ;; esac; return 1; }
bad=0
files=0
for f in "$OUT"/ref/*; do
  g=$OUT/new/$(basename "$f")
  skipped "$(basename "$f")" && continue
  files=$((files + 1))
  if [ ! -e "$g" ]; then
    echo "same_outputs: $(basename "$f"): only the reference build wrote it"; bad=1
  elif ! cmp -s "$f" "$g"; then
    echo "same_outputs: $(basename "$f") differs: $(cmp "$f" "$g" 2>&1 | head -n1)"; bad=1
  fi
done
for g in "$OUT"/new/*; do
  skipped "$(basename "$g")" && continue
  [ -e "$OUT/ref/$(basename "$g")" ] || { echo "same_outputs: $(basename "$g"): only the new build wrote it"; bad=1; }
done
echo "same_outputs: $n captures, $files files compared${SAME_OUTPUTS_SKIP:+ (not compared: $SAME_OUTPUTS_SKIP)}: $([ $bad = 0 ] && echo "all the same" || echo "DIFFERENCES")"
exit $bad

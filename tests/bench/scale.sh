#!/usr/bin/env bash
# tests/bench/scale.sh — `gpuio report`, `convert` and `merge` on a whole-node
# capture (issue #25): `gen_capture scale` writes EVENTS records shaped like a
# real 150 s trace of a PyTorch job beside fio and the node's daemons (a third
# of them switches, wake-ups and WAIT records). Each command's wall time and
# peak RSS at 1x and 4x EVENTS, beside the targets: under 60 s and 512 MiB at
# 1x (the report under 1 GiB while it holds the thread states), and time
# growing near-linearly (4x/1x <= 4.6).
#
#   tests/bench/scale.sh [EVENTS]     default 30000000 (SCALE_EVENTS too);
#                                     writes build/bench/scale.md
#   SCALE_JSON_4X=0|1                 convert to .json at 4x too (default: when
#                                     the disk has room for twice its estimated size)
#
# Files go to /var/tmp (SCALE_TMP) and are deleted as soon as measured.
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
GPUIO="${GPUIO:-$SRC/build/gpuio}"
GEN="${GEN_CAPTURE:-$SRC/build/tests/gen_capture}"
OUT="${BENCH_OUT:-$SRC/build/bench}"
EVENTS="${1:-${SCALE_EVENTS:-30000000}}"
TMPD=$(mktemp -d "${SCALE_TMP:-/var/tmp}/gpuio-scale-bench.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
mkdir -p "$OUT"
[ -x /usr/bin/time ] || { echo "scale bench: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
[ -x "$GEN" ] || { echo "scale bench: $GEN missing (make test-progs)" >&2; exit 1; }

declare -A T M     # T[cmd,x] seconds, M[cmd,x] peak RSS KiB
json4=""           # why the 4x JSON was not measured

measure() {  # KEY X CMD... -> T[KEY,X], M[KEY,X]; fails loudly
  local key=$1 x=$2
  shift 2
  if ! /usr/bin/time -f "%e %M" -o "$TMPD/time" "$@" >"$TMPD/out.txt" 2>"$TMPD/err.txt"; then
    echo "scale bench: failed: $*" >&2
    tail -5 "$TMPD/err.txt" >&2
    exit 1
  fi
  if grep -qiE "warning|error" "$TMPD/err.txt"; then
    echo "scale bench: $key said:" >&2
    grep -iE "warning|error" "$TMPD/err.txt" | head -5 >&2
  fi
  read -r T[$key,$x] M[$key,$x] < "$TMPD/time"
  printf '  %-14s %3sx %8s s %8s MiB\n' "$key" "$x" "${T[$key,$x]}" "$((M[$key,$x] / 1024))" >&2
}

"$GEN" basic "$TMPD/second.gpuio" > /dev/null
declare -A NREC SIZE
for x in 1 4; do
  n=$((EVENTS * x))
  cap="$TMPD/node-$x.gpuio"
  echo "scale bench: generating $n records ..." >&2
  man=$("$GEN" scale "$cap" "$n")
  NREC[$x]=$(sed -E 's/.*"records":([0-9]+).*/\1/' <<<"$man")
  [ "$x" = 1 ] && NSCHED=$(sed -E 's/.*"sched":([0-9]+).*/\1/' <<<"$man")
  SIZE[$x]=$(stat -c %s "$cap")
  echo "  $man" >&2
  measure report "$x" "$GPUIO" report --json "$cap"
  measure pftrace "$x" "$GPUIO" convert "$cap" -o "$TMPD/out.pftrace"
  [ "$x" = 1 ] && PFSIZE=$(stat -c %s "$TMPD/out.pftrace")
  rm -f "$TMPD/out.pftrace"
  do_json=1
  if [ "$x" != 1 ]; then
    need=$((JSIZE * x * 2))
    avail=$(($(df -P -B1 "$TMPD" | awk 'NR==2 {print $4}')))
    if [ "${SCALE_JSON_4X:-}" = 0 ]; then
      do_json=0 json4="left out (SCALE_JSON_4X=0)"
    elif [ "${SCALE_JSON_4X:-}" != 1 ] && [ "$need" -gt "$avail" ]; then
      do_json=0 json4="left out: ~$((JSIZE * x >> 30)) GiB of JSON, $((avail >> 30)) GiB free"
    fi
  fi
  if [ "$do_json" = 1 ]; then
    measure json "$x" "$GPUIO" convert "$cap" -o "$TMPD/out.json"
    [ "$x" = 1 ] && JSIZE=$(stat -c %s "$TMPD/out.json")
    rm -f "$TMPD/out.json"
  fi
  measure merge "$x" "$GPUIO" merge "$cap" "$TMPD/second.gpuio" -o "$TMPD/merged.pftrace"
  rm -f "$TMPD/merged.pftrace" "$cap"
done

verdict() {  # VALUE LIMIT -> ok / OVER
  awk -v v="$1" -v l="$2" 'BEGIN { print (v + 0 <= l + 0) ? "ok" : "OVER" }'
}
row() {  # KEY LABEL RSS_LIMIT_MIB
  local k=$1 label=$2 lim=$3 t1=${T[$1,1]} m1=$((M[$1,1] / 1024)) t4 m4 ratio
  if [ -n "${T[$k,4]:-}" ]; then
    t4="${T[$k,4]} s" m4="$((M[$k,4] / 1024)) MiB"
    ratio=$(awk -v a="${T[$k,1]}" -v b="${T[$k,4]}" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
    ratio="$ratio ($(verdict "$ratio" 4.6))"
  else
    t4="—" m4="—" ratio="— ($json4)"
  fi
  echo "| $label | ${t1} s ($(verdict "$t1" 60)) | $m1 MiB / $lim ($(verdict "$m1" "$lim")) | $t4 | $m4 | $ratio |"
}
{
  echo "## report, convert and merge on a whole-node capture"
  echo
  echo "\`gen_capture scale\`: 1x = ${NREC[1]} records ($((SIZE[1] >> 20)) MiB capture, $NSCHED of them"
  echo "switches, wake-ups and WAIT records), 4x = ${NREC[4]} records ($((SIZE[4] >> 20)) MiB);"
  echo "outputs at 1x: .pftrace $((PFSIZE >> 20)) MiB, .json $((JSIZE >> 20)) MiB. Targets: under 60 s and"
  echo "512 MiB at 1x (the report 1 GiB: it holds every thread state for the"
  echo "loops' and the GPU gaps' splits), 4x/1x time <= 4.6."
  echo
  echo "| command | 1x time (< 60 s) | 1x peak RSS / target | 4x time | 4x peak RSS | 4x/1x time (<= 4.6) |"
  echo "|---|---:|---:|---:|---:|---:|"
  row report "\`report --json\`" 1024
  row pftrace "\`convert -o X.pftrace\`" 512
  row json "\`convert -o X.json\`" 512
  row merge "\`merge CAP small.gpuio -o X.pftrace\`" 512
  echo
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'))."
} | tee "$OUT/scale.md"

#!/usr/bin/env bash
# t_cupti_on: where a process's CUPTI collector is on, its CUDA uprobes go.
#
# A stand-in libcupti.so.13 (tests/progs/fake_libcupti.c, given through
# GPUIO_CUPTI) lets the real collector start and report ON without a GPU.
# fake_libcuda_calls initialises its stand-in driver first (the driver loads
# the collector at cuInit), then waits; gpuio must see the ON record, remove
# that process's uprobes (and say so), and the 11 driver calls the program
# then makes must not reach the capture through uprobes. The same program
# without the stand-in CUPTI (collector unavailable: no driver) keeps its
# uprobes: all 11 calls are recorded. Ground truth: the program's own CALL
# lines, and the collector's ON record naming the stand-in library.
source "$(dirname "$0")/lib.sh"
need_root
CALLS="$GPUIO_TESTS/fake_libcuda_calls"
LIB="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
CUPTI="$GPUIO_TESTS/fake_cupti.d/libcupti.so.13"
for f in "$CALLS" "$LIB" "$CUPTI"; do [ -e "$f" ] || fail "$f missing (make test-progs)"; done
[ -e "$(dirname "$GPUIO")/libgpuio-cupti.so" ] || skip "no CUPTI collector built (CUDA headers absent)"
chmod 0755 "$TMP"

run() {  # run LABEL [GPUIO_CUPTI path]: trace the program; wait for the uprobe removal when ON
  local label=$1 cupti=${2:-}
  rm -f "$TMP/$label.go"
  spawn -o "$TMP/$label.out" -e "$TMP/$label.err" gpuio \
    "$GPUIO" trace -v -o "$TMP/$label.json" -- env ${cupti:+GPUIO_CUPTI=$cupti} \
    "$CALLS" "$LIB" --init-first --wait "$TMP/$label.go"
  local g=$SPAWNED
  wait_line -f "$TMP/$label.err" -m "$label: the program never got ready" '^ready' "$TMP/$label.out"
  if [ -n "$cupti" ]; then
    poll -t 5 grep -q "uprobes removed" "$TMP/$label.err" || true
    grep -q "CUDA API calls from its CUPTI collector; its uprobes removed (1 libraries)" "$TMP/$label.err" ||
      { cat "$TMP/$label.err"; fail "$label: the collector is on, yet its uprobes were not removed"; }
  else
    sleep 2.5   # two ingest polls: the collector's UNAVAILABLE record is in
  fi
  touch "$TMP/$label.go"
  wait "$g" || { cat "$TMP/$label.err"; fail "$label: gpuio trace failed"; }
  [ "$(grep -c '^CALL' "$TMP/$label.out")" = 11 ] || fail "$label: the program did not make its 11 calls"
}

count_uprobe_calls() {  # CAPTURE: "uprobe_records state reason" of the capture
  pycheck cuda_calls.uprobe_calls "$1"
}

run on "$CUPTI"
read -r n state reason < <(count_uprobe_calls "$TMP/on.gpuio")
echo "collector on: $n CUDA API records; first collector state $state: $reason"
[ "$state" = 1 ] || fail "the collector did not report ON (state $state)"
case "$reason" in *fake_cupti.d/libcupti.so.13_\(GPUIO_CUPTI\)*) ;; *) fail "the ON record does not name the stand-in library: $reason" ;; esac
[ "$n" = 0 ] || fail "$n CUDA calls came through uprobes after the collector was on"

run off
read -r n state reason < <(count_uprobe_calls "$TMP/off.gpuio")
echo "collector unavailable: $n CUDA API records; first collector state $state"
[ "$state" = 2 ] || fail "without the stand-in CUPTI the collector should be unavailable (state $state)"
[ "$n" = 11 ] || fail "uprobes must stay where CUPTI is unavailable: $n of 11 calls recorded"
grep -q "uprobes removed" "$TMP/off.err" && fail "uprobes removed although the collector is off"
echo "PASS: t_cupti_on"

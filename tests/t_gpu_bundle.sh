#!/usr/bin/env bash
# t_gpu_bundle: `make gpu-bundle` (tests/gpu/bundle/) is what a GPU machine
# with nothing installed can run, and its checks are right on real outputs.
#   self-contained  a copy of the folder elsewhere: each binary's libraries
#                   resolve, in an empty environment, inside the copy or to
#                   glibc's own; no search path leaves it; <= 48 MiB; the
#                   copy's gpuio runs with no environment and finds the
#                   collector beside itself (doctor), not in the build tree
#   no GPU          run.sh exits 2 with its reason and writes nothing
#   real outputs    tests/gpu/runs/2026-11-26-h200 (an H200, driver 580,
#                   CUDA 13.0, torch 2.11): gpu_check.py passes every saved
#                   gpu_check trace against the cudaEvent truth the program
#                   wrote there; summarize.py gives the saved logs' known
#                   verdicts and numbers, and PASS/FAIL when one is changed;
#                   the saved PyTorch captures export to .json and .pftrace
#                   that Perfetto's importer takes
source "$(dirname "$0")/lib.sh"
B=$(dirname "$GPUIO")/gpu-bundle
RUNS=$GPUIO_SRC/tests/gpu/runs/2026-11-26-h200
[ -x "$B/run.sh" ] || skip "no GPU bundle built (make gpu-bundle needs the CUPTI collector: CUDA headers absent)"

# ---- self-contained: a copy away from the build tree ----
C=$TMP/copy
cp -a "$B" "$C"
GLIBC='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv)\b'
for f in "$C/build/gpuio" "$C/build/libgpuio-cupti.so"; do
  env -i /usr/bin/ldd "$f" > "$TMP/ldd.out" 2>&1 || fail "ldd $f failed"
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    case $path in
      "$C"/build/lib/*) ;;
      *) [[ $name =~ $GLIBC ]] || fail "$f: $name resolves outside the bundle ($path)" ;;
    esac
  done < <(sed 's/^[[:space:]]*//' "$TMP/ldd.out")
  grep -q "not found" "$TMP/ldd.out" && fail "$f: $(grep 'not found' "$TMP/ldd.out")"
  rp=$(readelf -d "$f" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]/\1/p')
  case $rp in ''|'$ORIGIN/lib') ;; *) fail "$f: search path $rp" ;; esac
done
nlib=$(ls "$C/build/lib" | wc -l)
size=$(du -sb "$C" | cut -f1)
[ "$size" -le $((48 << 20)) ] || fail "the bundle is $size bytes, over 48 MiB"
env -i "$C/build/gpuio" doctor --json > "$TMP/doctor.json" 2>/dev/null || true
pycheck gpu_runs.bundle_collector "$TMP/doctor.json" "$C/build/libgpuio-cupti.so" ||
  fail "the copy does not find its own collector"
echo "self-contained: $((size >> 10)) KiB, $nlib libraries beside gpuio, its collector found beside it"

# ---- no GPU: exit 2, the reason, nothing written ----
if ! ls /dev/nvidia[0-9]* > /dev/null 2>&1; then
  rc=0; "$C/run.sh" "$TMP/out" > "$TMP/run.out" 2> "$TMP/run.err" || rc=$?
  [ "$rc" = 2 ] || fail "run.sh without a GPU exits $rc, want 2"
  grep -q "no NVIDIA GPU on this machine" "$TMP/run.err" || fail "run.sh does not say why: $(cat "$TMP/run.err")"
  [ ! -e "$TMP/out" ] || [ -z "$(ls -A "$TMP/out")" ] || fail "run.sh wrote files without a GPU"
  echo "no GPU: exit 2: $(cat "$TMP/run.err")"
fi

# ---- the real run: gpu_check traces against their truth ----
python3 "$GPUIO_SRC/tests/gpu/gpu_check.py" --self-test > "$TMP/self.out" 2>&1 ||
  { cat "$TMP/self.out"; fail "gpu_check.py --self-test"; }
for tarball in "$RUNS"/gpucheck-traces*.tar.gz; do
  d=$TMP/$(basename "$tarball" .tar.gz)
  mkdir -p "$d" && tar xzf "$tarball" -C "$d"
  for tr in "$d"/run-*/*.truth.json; do
    label=$(basename "$(dirname "$tr")")-$(basename "$tr" .truth.json)
    python3 "$GPUIO_SRC/tests/gpu/gpu_check.py" --label "$label" "${tr%.truth.json}.json" "$tr" \
      > "$TMP/gc.out" 2>&1 || { cat "$TMP/gc.out"; fail "gpu_check.py: $label from $(basename "$tarball")"; }
    grep -E "\]: (durations|clock) " "$TMP/gc.out" | cut -c1-200
  done
done

# ---- the summary parser on the saved logs ----
L=$TMP/logs
mkdir -p "$L" && tar xzf "$RUNS/logs.tar.gz" -C "$L"
rc=0; python3 "$GPUIO_SRC/tests/gpu/bundle/summarize.py" "$L" "$RUNS/doctor.json" > "$TMP/sum.txt" || rc=$?
pycheck gpu_runs.bundle_summary "$TMP/sum.txt" "$rc" || { cat "$TMP/sum.txt"; fail "summarize.py on the saved H200 logs"; }
# changed outputs: every check passing -> PASS; a log missing -> FAIL
for m in bpf nobpf; do
  sed -i -E 's/^(gpu-check \[[a-z]+-(launch|attach)\]: )FAIL \(durations\)$/\1PASS/' "$L/gpucheck-$m.log"
done
pycheck gpu_runs.bundle_fix_report "$L/train-bpf.report.json"
rc=0; python3 "$GPUIO_SRC/tests/gpu/bundle/summarize.py" "$L" "$RUNS/doctor.json" > "$TMP/sum2.txt" || rc=$?
[ "$rc" = 0 ] && grep -q "^RESULT: PASS (0 of 8 checks failed)" "$TMP/sum2.txt" ||
  { cat "$TMP/sum2.txt"; fail "summarize.py: all passing, yet rc $rc"; }
rm "$L/gpucheck-nobpf.log"
rc=0; python3 "$GPUIO_SRC/tests/gpu/bundle/summarize.py" "$L" "$RUNS/doctor.json" > "$TMP/sum3.txt" || rc=$?
[ "$rc" = 1 ] && grep -Eq "^gpu_check nobpf +FAIL  no log" "$TMP/sum3.txt" ||
  { cat "$TMP/sum3.txt"; fail "summarize.py: a missing log must fail"; }
echo "summarize.py: PASS when all pass, FAIL on a missing log"

# ---- the saved PyTorch captures export cleanly ----
for m in bpf nobpf; do
  gunzip -c "$RUNS/train-$m.gpuio.gz" > "$TMP/train-$m.gpuio"
  for ext in json pftrace; do
    "$GPUIO" convert "$TMP/train-$m.gpuio" -o "$TMP/train-$m.$ext" 2> "$TMP/conv.err" ||
      { cat "$TMP/conv.err"; fail "convert train-$m to .$ext"; }
    tp_check "$TMP/train-$m.$ext"
  done
done
echo "PASS: t_gpu_bundle"

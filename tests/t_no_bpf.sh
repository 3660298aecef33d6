#!/usr/bin/env bash
# t_no_bpf: `gpuio trace` where BPF is refused records the GPU side alone.
#
# Run as an unprivileged user (nobody, when the suite runs as root; from
# copies of gpuio, its collector and the stand-ins in a 0755 temporary
# directory, since the tree may be out of nobody's reach), with the real
# collector and, where a GPU would be, stand-ins:
#   launch  `gpuio trace -- python3 gen.py` as nobody: the program writes a
#           CUPTI activity spec with times around now and execs cupti_synth,
#           which puts those records through the real collector into the
#           side file gpuio gave it (GPUIO_GPU_DIR). Ground truth: the spec.
#           gpuio says once that BPF is off, why, and which layers are off;
#           the export holds exactly the spec's kernel, copy, memset, two API
#           calls and NVTX range, with the spec's durations and the API ->
#           kernel/copy flows; Perfetto's importer takes the .json and the
#           .pftrace; the capture is complete (final stats record), says
#           no_bpf and modes off; the report runs and says so
#   driver  the same through the stand-in libcuda.so.1 (its cuInit loads
#           the collector through CUDA_INJECTION64_PATH, as the driver does)
#           and the stand-in libcupti.so.13: the collector reports ON, by
#           launch, and the process is named after what `env` exec'd (named
#           again from /proc when its collector first speaks)
#   attach  `gpuio trace --no-bpf -p PID` as nobody on nobody's own process
#           that loaded the stand-in driver: the collector is injected
#           (ptrace) and reports ON with how=attach
#   errors  -a and --vfs-mode without BPF: one clear error, exit 1; doctor
#           as nobody says trace_mode gpu_only and why
source "$(dirname "$0")/lib.sh"
[ -e "$(dirname "$GPUIO")/libgpuio-cupti.so" ] || skip "no CUPTI collector built (CUDA headers absent)"
SYNTH="$GPUIO_TESTS/cupti_synth"
CALLS="$GPUIO_TESTS/fake_libcuda_calls"
LIBCUDA="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
CUPTI="$GPUIO_TESTS/fake_cupti.d/libcupti.so.13"
for f in "$SYNTH" "$CALLS" "$LIBCUDA" "$CUPTI"; do [ -e "$f" ] || fail "$f missing (make test-progs)"; done
if [ "$(id -u)" -eq 0 ]; then
  command -v setpriv >/dev/null || skip "no setpriv (util-linux) to drop root"
  AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all)
else
  AS=()
fi
W=$TMP/w
mkdir -p "$W" && chmod 0755 "$TMP" && chmod 0777 "$W"
cd "$W"
# The unprivileged user must reach gpuio, the collector beside it and the
# stand-ins wherever the tree lives (a clone under root's 0700 home is out of
# nobody's reach): it runs copies, in the same layout, from a 0755 directory.
if [ ${#AS[@]} -gt 0 ]; then
  B=$TMP/bin
  mkdir -p "$B/tests/fake_cuda" "$B/tests/fake_cupti.d"
  cp "$GPUIO" "$(dirname "$GPUIO")/libgpuio-cupti.so" "$B/"
  cp "$SYNTH" "$CALLS" "$B/tests/"
  cp "$LIBCUDA" "$B/tests/fake_cuda/"
  cp "$CUPTI" "$B/tests/fake_cupti.d/"
  chmod -R a+rX "$B"
  GPUIO=$B/gpuio SYNTH=$B/tests/cupti_synth CALLS=$B/tests/fake_libcuda_calls
  LIBCUDA=$B/tests/fake_cuda/libcuda.so.1 CUPTI=$B/tests/fake_cupti.d/libcupti.so.13
  "${AS[@]}" sh -c 'for f; do [ -r "$f" ] || { echo "$f"; exit 1; }; done' sh \
    "$GPUIO" "$B/libgpuio-cupti.so" "$SYNTH" "$CALLS" "$LIBCUDA" "$CUPTI" > "$TMP/unreadable" ||
    skip "nobody cannot read $(cat "$TMP/unreadable") even in a 0755 temporary directory ($TMP)"
  echo "as nobody: gpuio, its collector and the stand-ins copied to $B (the tree may be out of nobody's reach)"
fi

# ---- launch: known GPU records through the real collector ----
cat > "$W/gen.py" <<'EOF'
import os, sys, time
t = time.monotonic_ns() + 20_000_000
tid = os.getpid()
spec = f"""api runtime {t} {t + 50000} {tid} 1 211
kernel {t + 100000} {t + 2100000} 0 7 1 grid=4,1,1 block=128,1,1 _Z11spin_kernely
api runtime {t + 200000} {t + 260000} {tid} 2 41
memcpy {t + 300000} {t + 400000} 0 7 2 1048576 htod async
memset {t + 500000} {t + 510000} 0 7 3 4096 0 async
nvtx {t - 100000} {t + 2200000} {tid} step
flush
"""
open(sys.argv[1], "w").write(spec)
time.sleep(0.3)
os.execv(sys.argv[2], [sys.argv[2], sys.argv[1], os.environ["GPUIO_GPU_DIR"]])
EOF
"${AS[@]}" "$GPUIO" trace -o "$W/l.json" -- python3 "$W/gen.py" "$W/spec" "$SYNTH" \
  > "$W/l.out" 2> "$W/l.err" || { cat "$W/l.err"; fail "launch without BPF failed"; }
cat "$W/l.err"
[ "$(grep -c 'BPF is off' "$W/l.err")" = 1 ] || fail "gpuio must say once that BPF is off"
grep -q "BPF is off (not root and no CAP_BPF + CAP_PERFMON): files, disks, thread states and CUDA uprobes are not traced" "$W/l.err" ||
  fail "the BPF-off line does not say why and what is off"
grep -q 'GPU only (BPF off)' "$W/l.err" || fail "the summary line does not say GPU only"
pycheck gpu_runs.nobpf_export "$W/l.json" "$W/spec" || fail "the export does not hold the spec's GPU records"
check_struct "$W/l.json"
"${AS[@]}" "$GPUIO" convert "$W/l.gpuio" -o "$W/l.pftrace" 2>/dev/null || fail "convert to .pftrace failed"
tp_check "$W/l.pftrace"
"$GPUIO" info --json "$W/l.gpuio" | pycheck gpu_runs.nobpf_info_launch || fail "gpuio info disagrees"
"$GPUIO" report "$W/l.gpuio" > "$W/l.report" 2>&1 || { cat "$W/l.report"; fail "report failed"; }
grep -q 'attach      vfs=off block=off proc=off' "$W/l.report" || fail "the report does not say the layers were off"
grep -q 'drops       measured 0,' "$W/l.report" || fail "the report does not give the drops"
grep -q 'no thread states (traced without BPF)' "$W/l.report" || fail "the report does not say why no thread states"

# ---- driver: the stand-in driver loads the collector at cuInit ----
"${AS[@]}" "$GPUIO" trace -o "$W/d.json" -- env GPUIO_CUPTI="$CUPTI" "$CALLS" "$LIBCUDA" --init-first \
  --linger 2500 > "$W/d.out" 2> "$W/d.err" || { cat "$W/d.err"; fail "driver launch without BPF failed"; }
[ "$(grep -c '^CALL' "$W/d.out")" = 11 ] || fail "the program did not make its 11 calls"
"$GPUIO" info --json "$W/d.gpuio" | pycheck gpu_runs.nobpf_info_driver ||
  fail "the stand-in driver did not load the collector"
pycheck gpu_runs.nobpf_driver_named "$W/d.json" || fail "the launched process is not named"

# ---- attach: -p on one's own process, injection by ptrace, no BPF ----
rm -f "$W/go"
spawn -l "$W/a.out" target "${AS[@]}" env GPUIO_CUPTI="$CUPTI" "$CALLS" "$LIBCUDA" --init-first --wait "$W/go"
app=$SPAWNED
wait_line -m "the attach target never got ready" '^ready' "$W/a.out"
tpid=$(awk '/^ready/ {print $2}' "$W/a.out")
spawn -o /dev/null -e "$W/a.err" gpuio "${AS[@]}" "$GPUIO" trace --no-bpf -p "$tpid" -o "$W/a.json"
g=$SPAWNED
poll -t 5 grep -q "GPU collector injected into pid $tpid\|could not inject" "$W/a.err" || true
grep -q "GPU collector injected into pid $tpid" "$W/a.err" || { cat "$W/a.err"; fail "no injection without BPF"; }
sleep 1.5   # one ingest period: the ON record is in
touch "$W/go"
wait "$app" || fail "the attach target failed"
wait "$g" || { cat "$W/a.err"; fail "gpuio trace --no-bpf -p failed"; }
grep -q 'BPF is off (--no-bpf)' "$W/a.err" || fail "--no-bpf is not said as the reason"
grep -q 'all traced processes exited' "$W/a.err" || fail "the trace did not end with its target"
"$GPUIO" info --json "$W/a.gpuio" | pycheck gpu_runs.nobpf_info_attach "$tpid" || fail "the injected collector did not report"
check_struct "$W/a.json"

# ---- errors and doctor ----
rc=0; "${AS[@]}" "$GPUIO" trace -a -d 1s -o "$W/e.json" > /dev/null 2> "$W/e.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'trace -a needs BPF' "$W/e.err" || { cat "$W/e.err"; fail "-a without BPF: rc $rc"; }
rc=0; "${AS[@]}" "$GPUIO" trace --vfs-mode syscall -o "$W/e.json" -- true > /dev/null 2> "$W/e.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'vfs-mode needs BPF' "$W/e.err" || { cat "$W/e.err"; fail "--vfs-mode without BPF: rc $rc"; }
if [ ${#AS[@]} -gt 0 ]; then
  rc=0; "${AS[@]}" "$GPUIO" doctor --json > "$W/doc.json" 2>/dev/null || rc=$?
  pycheck gpu_runs.nobpf_doctor "$W/doc.json" || fail "doctor does not say GPU only"
  [ "$rc" = 1 ] || fail "doctor as nobody exits $rc, want 1 (files and disks cannot be traced)"
fi
echo "PASS: t_no_bpf"

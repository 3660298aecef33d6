#!/usr/bin/env bash
# t_no_bpf: `gpuio trace` where BPF is refused records the GPU side alone.
#
# Run as an unprivileged user (nobody, when the suite runs as root), with the
# real collector and, where a GPU would be, stand-ins:
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
python3 - "$W/l.json" "$W/spec" <<'EOF' || fail "the export does not hold the spec's GPU records"
import json, sys
ev = json.load(open(sys.argv[1]))
spec = [l.split() for l in open(sys.argv[2]) if l.strip() and l.split()[0] != "flush"]
X = [e for e in ev if e.get("ph") == "X"]
want = {  # name -> (cat, dur us) from the spec
    "spin_kernel(unsigned long long)": ("gpu", 2000.0), "memcpy HtoD": ("gpu", 100.0),
    "memset": ("gpu", 10.0), "cudaLaunchKernel": ("cuda_api", 50.0),
    "cudaMemcpyAsync": ("cuda_api", 60.0), "step": ("nvtx", 2300.0)}
got = {}
for e in X:
    if e.get("cat") in ("gpu", "cuda_api", "nvtx"):
        got.setdefault(e["name"], []).append(e)
bad = []
for n, (cat, dur) in want.items():
    g = got.get(n, [])
    if len(g) != 1 or g[0]["cat"] != cat or abs(g[0]["dur"] - dur) > 0.001:
        bad.append("%s: want one %s slice of %.3f us, got %s" % (
            n, cat, dur, [(x["cat"], x["dur"]) for x in g]))
extra = sorted(set(got) - set(want))
if extra:
    bad.append("unexpected GPU slices: %s" % extra)
# starts relative to each other as in the spec (kernel 100 us after the launch call)
if not bad:
    k, a = got["spin_kernel(unsigned long long)"][0], got["cudaLaunchKernel"][0]
    if abs((k["ts"] - a["ts"]) - 100.0) > 0.001:
        bad.append("kernel starts %.3f us after its launch, the spec says 100" % (k["ts"] - a["ts"]))
    # flows: launch -> kernel, memcpy call -> copy
    for api, op in (("cudaLaunchKernel", "spin_kernel(unsigned long long)"), ("cudaMemcpyAsync", "memcpy HtoD")):
        s, d = got[api][0], got[op][0]
        if not (s.get("flow_out") and d.get("flow_in") and s.get("bind_id") == d.get("bind_id")):
            bad.append("no flow %s -> %s" % (api, op))
    pid = a["pid"]
    names = [e["args"]["name"] for e in ev if e.get("name") == "process_name" and e.get("pid") == pid]
    if len(names) != 1 or not names[0].startswith("python3: python3 "):
        bad.append("process %d named %s, want python3 and its command line (from /proc, "
                   "no exec record)" % (pid, names))
info = [e for e in ev if e.get("name") == "gpuio trace info"][0]["args"]
for k in ("vfs_mode", "block_mode", "sched_mode"):
    if info[k] != "off":
        bad.append("%s %s, want off" % (k, info[k]))
if not info["modes_detail"].startswith("no BPF: not root"):
    bad.append("modes_detail: %s" % info["modes_detail"])
if not (info["drops_known"] and info["dropped"] == 0 and info["capture_complete"]):
    bad.append("drops/complete: %s %s %s" % (info["drops_known"], info["dropped"], info["capture_complete"]))
print("\n".join(bad) or "export: the spec's 6 GPU records, durations, flows and offsets; modes off; complete")
sys.exit(1 if bad else 0)
EOF
check_struct "$W/l.json"
"${AS[@]}" "$GPUIO" convert "$W/l.gpuio" -o "$W/l.pftrace" 2>/dev/null || fail "convert to .pftrace failed"
tp_check "$W/l.pftrace"
"$GPUIO" info --json "$W/l.gpuio" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["flags"]["no_bpf"] is True and d["flags"]["launch"] is True, d["flags"]
assert set(d["modes"].values()) == {"off"}, d["modes"]
c = d["gpu"]["collectors"]
assert len(c) == 1 and c[0]["state"] == "final" and c[0]["how"] == "launch", c
print("info: no_bpf, modes off, collector final by launch")' || fail "gpuio info disagrees"
"$GPUIO" report "$W/l.gpuio" > "$W/l.report" 2>&1 || { cat "$W/l.report"; fail "report failed"; }
grep -q 'attach      vfs=off block=off proc=off' "$W/l.report" || fail "the report does not say the layers were off"
grep -q 'drops       0 (measured)' "$W/l.report" || fail "the report does not give the drops"
grep -q 'no thread states (traced without BPF)' "$W/l.report" || fail "the report does not say why no thread states"

# ---- driver: the stand-in driver loads the collector at cuInit ----
"${AS[@]}" "$GPUIO" trace -o "$W/d.json" -- env GPUIO_CUPTI="$CUPTI" "$CALLS" "$LIBCUDA" --init-first \
  --linger 2500 > "$W/d.out" 2> "$W/d.err" || { cat "$W/d.err"; fail "driver launch without BPF failed"; }
[ "$(grep -c '^CALL' "$W/d.out")" = 11 ] || fail "the program did not make its 11 calls"
"$GPUIO" info --json "$W/d.gpuio" | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d["gpu"]["collectors"]
assert len(c) == 1 and c[0]["state"] == "final" and c[0]["how"] == "launch", c
assert "fake_cupti.d/libcupti.so.13" in c[0]["reason"], c[0]["reason"]
print("driver: collector %s by %s (%s)" % (c[0]["state"], c[0]["how"], c[0]["reason"]))' ||
  fail "the stand-in driver did not load the collector"
python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))
n = [e["args"]["name"] for e in ev if e.get("name") == "process_name" and
     e["args"]["name"].startswith("fake_libcuda_c")]
assert n, "the driver process is not named"' "$W/d.json" || fail "the launched process is not named"

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
"$GPUIO" info --json "$W/a.gpuio" | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = [x for x in d["gpu"]["collectors"] if x["pid"] == int(sys.argv[1])]
assert c and c[0]["how"] == "attach" and c[0]["state"] in ("on", "final"), c
print("attach: collector %s by %s" % (c[0]["state"], c[0]["how"]))' "$tpid" || fail "the injected collector did not report"
check_struct "$W/a.json"

# ---- errors and doctor ----
rc=0; "${AS[@]}" "$GPUIO" trace -a -d 1s -o "$W/e.json" > /dev/null 2> "$W/e.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'trace -a needs BPF' "$W/e.err" || { cat "$W/e.err"; fail "-a without BPF: rc $rc"; }
rc=0; "${AS[@]}" "$GPUIO" trace --vfs-mode syscall -o "$W/e.json" -- true > /dev/null 2> "$W/e.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'vfs-mode needs BPF' "$W/e.err" || { cat "$W/e.err"; fail "--vfs-mode without BPF: rc $rc"; }
if [ ${#AS[@]} -gt 0 ]; then
  rc=0; "${AS[@]}" "$GPUIO" doctor --json > "$W/doc.json" 2>/dev/null || rc=$?
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
m = d["trace"]["mode"]
assert d["trace_mode"] == "gpu_only" and m["status"] == "warn", d["trace_mode"]
assert "not root" in m["detail"], m
print("doctor as nobody: %s: %s" % (d["trace_mode"], m["value"]))' "$W/doc.json" || fail "doctor does not say GPU only"
  [ "$rc" = 1 ] || fail "doctor as nobody exits $rc, want 1 (files and disks cannot be traced)"
fi
echo "PASS: t_no_bpf"

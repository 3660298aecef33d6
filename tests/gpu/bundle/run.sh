#!/usr/bin/env bash
# run.sh [OUTDIR] — the GPU bundle's one script (`make gpu-bundle`; README.md
# beside it in the source tree). On a machine with an NVIDIA GPU, nothing
# installed but the driver, CUDA's nvcc and PyTorch, within 8 minutes:
#
#   1. what the machine is (GPU, driver, kernel, CUDA, CUPTI, torch) and
#      `gpuio doctor --json`
#   2. gpu_check (kernels and copies of known duration, cudaEvent truth)
#      traced by launch and by attach (-p), checked by gpu_check.py: with BPF
#      where this kernel loads it, and with --no-bpf (CUPTI alone)
#   3. a PyTorch training loop (train_gpu.py: DataLoader workers reading
#      files, pin_memory, NVTX step ranges) untraced, traced with BPF, traced
#      --no-bpf; `gpuio report` on each capture, against the loop's own
#      timings; with BPF, once more under torch.profiler, its trace merged
#      onto the capture's timeline (`gpuio merge --pytorch`)
#   4. OUTDIR/summary.txt (tests/gpu/bundle/summarize.py) and at most 9 more
#      files: doctor.json, gpucheck-traces.tar.gz, train-bpf.gpuio.gz,
#      train-nobpf.gpuio.gz, train-report.txt, train-nobpf-report.txt,
#      train-prof.gpuio.gz and train-prof.torch.json.gz (full mode),
#      logs.tar.gz (every log, truth, program result and report; the logs
#      themselves stay in a temporary folder, named on the first line)
#
# Exit 0: every check passed; 1: a check failed (summary.txt says which);
# 2: it cannot run here (no GPU, no nvcc, no python3 with torch), nothing run.
set -u
B=$(cd "$(dirname "$0")" && pwd)
O=${1:-$B/out}
START=$(date +%s)
BUDGET=${GPU_BUNDLE_BUDGET_S:-480}
G=$B/build/gpuio
PY=${PYTHON:-python3}
cannot() { echo "gpu-bundle: $*" >&2; exit 2; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
# a step gets at most its share, and never past the budget
limit() { local l; l=$(left); [ "$l" -lt "$1" ] && echo $((l > 5 ? l : 5)) || echo "$1"; }

# ---- 0. can it run here at all ----
ls /dev/nvidia[0-9]* >/dev/null 2>&1 ||
  cannot "no NVIDIA GPU on this machine (no /dev/nvidiaN): this bundle needs one — nothing was run"
command -v nvidia-smi >/dev/null 2>&1 && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]' &&
  cannot "nvidia-smi lists no GPU: this bundle needs a working one — nothing was run"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || cannot "no nvcc (PATH, /usr/local/cuda/bin): gpu_check is built here — nothing was run"
"$PY" -c 'import torch' 2>/dev/null ||
  cannot "no $PY with torch (set PYTHON=): the training loop needs it — nothing was run"
[ -x "$G" ] || cannot "$G missing: the bundle is incomplete"

# OUTDIR gets only the files that come back; the logs stay in a folder of their own
mkdir -p "$O" && L=$(mktemp -d "${TMPDIR:-/tmp}/gpuio-bundle.XXXXXX") ||
  cannot "cannot write $O or a temporary folder"
exec > >(tee "$L/run.log") 2>&1
say() { echo "gpu-bundle: $*"; }
say "bundle $(cat "$B/VERSION" 2>/dev/null), output in $O, logs in $L, budget ${BUDGET}s"

# ---- 1. the machine ----
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "uid: $(id -u)"
  echo "kernel: $(uname -r) $(uname -v)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,uuid --format=csv,noheader 2>/dev/null |
    sed 's/^/gpu: /'
  echo "nvcc: $("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  "$PY" - <<'PY' 2>&1
import glob, os, torch
print("torch: %s (cuda %s)" % (torch.__version__, torch.version.cuda))
print("python: %s" % os.path.realpath(os.sys.executable))
d = os.path.dirname(torch.__file__)
for p in sorted(set(glob.glob(os.path.join(d, "..", "nvidia", "**", "libcupti.so*"), recursive=True))):
    print("torch_cupti: %s" % os.path.realpath(p))
PY
  ls /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.* /usr/local/cuda/lib64/libcupti.so.* 2>/dev/null |
    sed 's/^/cuda_cupti: /'
} > "$L/env.txt"
cat "$L/env.txt"
timeout "$(limit 60)" "$G" doctor --json > "$O/doctor.json" 2> "$L/doctor.err"
"$G" doctor > "$L/doctor.txt" 2>&1
mode=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("trace_mode","?"))' \
  "$O/doctor.json" 2>/dev/null || echo "?")
say "doctor: trace mode $mode"

# ---- 2. gpu_check: launch and attach, with BPF where it loads, and without ----
modes=(nobpf)
[ "$mode" = full ] && modes=(bpf nobpf)
for m in "${modes[@]}"; do
  args=""
  [ "$m" = nobpf ] && args=--no-bpf
  say "gpu_check ($m): $(limit 150)s at most"
  GPU_CHECK_TRACE_ARGS=$args GPU_CHECK_LABEL="$m-" GPU_CHECK_OUT="$L/gpu-check" \
    GPU_CHECK_RUN="$L/gpu-check/run-$m" timeout "$(limit 150)" "$B/tests/gpu/gpu_check.sh" \
    > "$L/gpucheck-$m.log" 2>&1
  echo "rc $?" >> "$L/gpucheck-$m.log"
  grep -E 'PASS|FAIL|error' "$L/gpucheck-$m.log" | grep -v '^gpu-check \[.*\]:       ' | head -20
done

# ---- 3. the training loop: untraced, with BPF, without ----
DATA=$(mktemp -d /tmp/gpuio-train.XXXXXX)
chmod 0755 "$DATA"
TRAIN=("$PY" "$B/tests/gpu/train_gpu.py" --data "$DATA" --files 512 --file-size 262144
       --workers 2 --batch 16 --epochs 2 --cpu-us 3000)
"$PY" "$B/tests/gpu/train_gpu.py" --create "$DATA" --files 512 --file-size 262144
say "train: untraced"
timeout "$(limit 90)" "${TRAIN[@]}" --out "$L/train-plain.json" > "$L/train-plain.log" 2>&1
echo "rc $?" >> "$L/train-plain.log"
tmodes=(nobpf)
[ "$mode" = full ] && tmodes=(bpf nobpf)
for m in "${tmodes[@]}"; do
  args=""
  [ "$m" = nobpf ] && args=--no-bpf
  say "train: traced ($m)"
  timeout "$(limit 120)" "$G" trace $args --no-export --capture "$L/train-$m.gpuio" -- \
    "${TRAIN[@]}" --out "$L/train-$m.json" > "$L/train-$m.log" 2>&1
  echo "rc $?" >> "$L/train-$m.log"
  "$G" info --json "$L/train-$m.gpuio" > "$L/train-$m.info.json" 2>> "$L/train-$m.log"
  timeout "$(limit 90)" "$G" report --json "$L/train-$m.gpuio" > "$L/train-$m.report.json" 2>> "$L/train-$m.log"
  timeout "$(limit 90)" "$G" report "$L/train-$m.gpuio" > "$L/train-$m.report.txt" 2>> "$L/train-$m.log"
  tail -n 3 "$L/train-$m.log"
done
# the PyTorch profiler's own trace of a traced run, merged onto gpuio's
# timeline (gpuio merge --pytorch: torch 2.x writes an absolute time base)
if [ "$mode" = full ]; then
  say "train: traced and profiled (torch.profiler), then merged"
  timeout "$(limit 120)" "$G" trace --no-export --capture "$L/train-prof.gpuio" -- \
    "${TRAIN[@]}" --profile "$L/train-prof.torch.json" --out "$L/train-prof.json" > "$L/train-prof.log" 2>&1
  echo "rc $?" >> "$L/train-prof.log"
  timeout "$(limit 90)" "$G" merge "$L/train-prof.gpuio" --pytorch "$L/train-prof.torch.json" \
    -o "$L/train-prof.merged.pftrace" > "$L/merge-prof.log" 2>&1
  echo "rc $?" >> "$L/merge-prof.log"
  tail -n 4 "$L/merge-prof.log"
  gzip -c "$L/train-prof.torch.json" > "$O/train-prof.torch.json.gz" 2>/dev/null
  [ -f "$L/train-prof.gpuio" ] && gzip -c "$L/train-prof.gpuio" > "$O/train-prof.gpuio.gz"
fi
rm -rf "$DATA"

# ---- 4. the summary and what comes back ----
"$PY" "$B/tests/gpu/bundle/summarize.py" "$L" "$O/doctor.json" > "$O/summary.txt" 2> "$L/summarize.err"
src=$?
cat "$O/summary.txt"
cp "$L/train-bpf.report.txt" "$O/train-report.txt" 2>/dev/null
cp "$L/train-nobpf.report.txt" "$O/train-nobpf-report.txt" 2>/dev/null
for m in bpf nobpf; do
  [ -f "$L/train-$m.gpuio" ] && gzip -c "$L/train-$m.gpuio" > "$O/train-$m.gpuio.gz"
done
(cd "$L/gpu-check" 2>/dev/null && tar czf "$O/gpucheck-traces.tar.gz" run-*/*.json 2>/dev/null)
(cd "$L" && tar czf "$O/logs.tar.gz" --exclude='*.gpuio' --exclude='gpu-check/gpu_check' \
  --exclude='run-*/*.json' . 2>/dev/null)
say "done in $(($(date +%s) - START))s; summary exit $src"
exit "$src"

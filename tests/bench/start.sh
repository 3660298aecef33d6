#!/usr/bin/env bash
# tests/bench/start.sh — part of `make bench`: how long `gpuio trace` takes
# to start tracing (issue 34: <= 300 ms wall, <= 150 ms CPU), attached to a
# running process (-p) and launching a command (--), from gpuio's own -v
# line "started in W ms (C ms CPU): PART w ms (c CPU), ..." (its clock from
# the trace's start to the targets in the traced set; CPU is the process's
# own, the kernel's verifier included) and the whole run's wall and CPU
# (/proc, a 10 ms trace: start, trace, end). Rows:
#   - the default, right after the previous run (on a kernel without fentry
#     the per-syscall mode: that run's gpuio-detach child may still be
#     closing its links, and takes turns with this attach);
#   - the default once no gpuio-detach is left (the links settled);
#   - --vfs-mode=syscall (one program pair on every syscall: few links);
#   - --no-stacks (no Python stack walk to verify);
#   - the ladder alone (GPUIO_BENCH_NO_MODE_PROBE=1): every refused VFS mode
#     costs a load of the whole set, as before the mode probe.
# Medians of BENCH_START_RUNS (7) runs, interleaved. Markdown on stdout;
# "n/a (why)" where it cannot run. Needs root.
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GPUIO=${GPUIO:-$SRC/build/gpuio}
RUNS=${BENCH_START_RUNS:-7}

echo "## Start: from \`gpuio trace\` to tracing"
echo
[ "$(id -u)" -eq 0 ] || { echo "n/a (needs root)"; exit 0; }
T=$(mktemp -d /var/tmp/gpuio-start.XXXXXX) || exit 0
sleep 600 & SLEEPER=$!
trap 'kill $SLEEPER 2>/dev/null; rm -rf "$T"' EXIT

# one NAME MODE ARGS...: a 10 ms trace; appends "wall cpu load_wall load_cpu
# run_wall run_cpu" (ms) to $T/NAME
one() {
  local name=$1 mode=$2; shift 2
  local env=() tgt=(-p "$SLEEPER")
  [ "$name" = ladder ] && env=(GPUIO_BENCH_NO_MODE_PROBE=1)
  if [ "$name" = settled ]; then
    for _ in $(seq 600); do pgrep -x gpuio-detach >/dev/null || break; sleep 0.05; done
  fi
  [ "$mode" = launch ] && tgt=(-- true)
  /usr/bin/env "${env[@]}" /usr/bin/time -f 'RUN %e %U %S' "$GPUIO" trace -v -d 10ms --no-export \
    --capture "$T/c.gpuio" "$@" "${tgt[@]}" >/dev/null 2>"$T/err"
  [ "$name" = default ] && cp "$T/err" "$T/default.err"
  awk '/started in/ {
         match($0, /started in [0-9]+ ms \([0-9]+ ms CPU\)/); split(substr($0, RSTART, RLENGTH), a, /[ (]+/)
         w = a[3]; c = a[5]
         match($0, /BPF load and attach \([^)]*\) [0-9]+ ms \([0-9]+ CPU\)/); s = substr($0, RSTART, RLENGTH)
         sub(/.*\) /, "", s); split(s, b, /[ (]+/); lw = b[1]; lc = b[3] }
       /^RUN / { rw = $2 * 1000; rc = ($3 + $4) * 1000 }
       END { if (w != "") print w, c, lw, lc, rw, rc }' "$T/err" >>"$T/$name.$mode"
}

for r in $(seq "$RUNS"); do
  for mode in attach launch; do
    echo "bench: start: round $r, $mode" >&2
    one default "$mode"
    one settled "$mode"
    one syscall "$mode" --vfs-mode=syscall
    one no-stacks "$mode" --no-stacks
    one ladder "$mode"
  done
done

echo "$(uname -r), $(nproc) CPUs; medians of $RUNS runs (min-max); a 10 ms trace each"
echo
echo "| setup | mode | to tracing, wall ms | to tracing, CPU ms | of it BPF load + attach, wall / CPU ms | whole run, wall / CPU ms | target ≤ 300 wall, ≤ 150 CPU |"
echo "|---|---|---:|---:|---:|---:|---|"
for name in default settled syscall no-stacks ladder; do
  for mode in attach launch; do
    f="$T/$name.$mode"
    [ -s "$f" ] || { echo "| $name | $mode | n/a ($(tail -1 "$T/err" 2>/dev/null)) | | | | |"; continue; }
    python3 - "$f" "$name" "$mode" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
col = lambda i: [r[i] for r in rows]
med = lambda i: statistics.median(col(i))
rng = lambda i: "%.0f (%.0f-%.0f)" % (med(i), min(col(i)), max(col(i)))
label = {"default": "default, right after the previous run",
         "settled": "default, no gpuio-detach left", "syscall": "--vfs-mode=syscall",
         "no-stacks": "--no-stacks",
         "ladder": "the ladder alone (no mode probe)"}[sys.argv[2]]
met = "; ".join("%s %s" % (k, "met" if med(i) <= lim else "not met (%+.0f ms)" % (med(i) - lim))
                for k, i, lim in (("wall", 0, 300), ("CPU", 1, 150)))
print("| %s | %s | %s | %s | %.0f / %.0f | %.0f / %.0f | %s |" % (label, sys.argv[3], rng(0), rng(1),
      med(2), med(3), med(4), med(5), met))
PY
  done
done
echo
if grep -q "refused" "$T/default.err" 2>/dev/null; then
  echo "Refused here, by the mode probe: $(grep refused "$T/default.err" | sed 's/^gpuio: //' | paste -sd';' | sed 's/;/; /g')."
  echo
fi

#!/usr/bin/env bash
# tests/bench/prog_cost.sh — part of `make bench`: what each gpuio BPF program
# costs per run on this kernel, from the kernel's own accounting
# (kernel.bpf_stats_enabled: run_cnt and run_time_ns per program), for the
# bench's pread workload. Steadier than wall-clock differences on a shared VM;
# includes ~20 ns of the accounting's own two clock reads per run.
#
# The snapshot is taken from inside the traced command, after the workload
# and before gpuio detaches: `sh -c 'preadloop …; bpftool prog show --json'`.
# Markdown on stdout; needs root and bpftool (else "n/a (why)").
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GPUIO=${GPUIO:-$SRC/build/gpuio}
PREAD=$SRC/build/tests/preadloop
CALLS=${BENCH_CALLS:-1000000}
FILE=${BENCH_FILE:-/var/tmp/gpuio-bench.dat}

echo "## gpuio BPF programs: ns per run (kernel.bpf_stats_enabled)"
echo
[ "$(id -u)" -eq 0 ] || { echo "n/a (needs root)"; exit 0; }
command -v bpftool >/dev/null || { echo "n/a (no bpftool)"; exit 0; }
[ -x "$PREAD" ] || { echo "n/a ($PREAD missing: make test-progs)"; exit 0; }
if [ ! -s "$FILE" ] || [ "$(stat -c %s "$FILE")" -lt $((256 << 20)) ]; then
  dd if=/dev/urandom of="$FILE" bs=1M count=256 status=none || { echo "n/a (cannot write $FILE)"; exit 0; }
fi
cat "$FILE" >/dev/null
T=$(mktemp -d /var/tmp/gpuio-progcost.XXXXXX) || exit 0
chmod 0755 "$T"
old=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled=$old; rm -rf "$T"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
# prog_table TITLE CMD: trace CMD (sh -c), print its programs' ns per run
prog_table() {
  echo "### $1"
  echo
  echo "bench: prog_cost: $1" >&2
  "$GPUIO" trace -q --no-export --capture "$T/c.gpuio" -- \
    sh -c "$2 >'$T/work.out' && bpftool prog show --json >'$T/progs.json'" \
    2>"$T/trace.err" || { echo "n/a (trace failed: $(tail -n1 "$T/trace.err"))"; echo; return; }
  python3 - "$T/progs.json" <<'EOF'
import json, sys
progs = json.load(open(sys.argv[1]))
rows = [(p["name"], p.get("run_cnt", 0), p.get("run_time_ns", 0)) for p in progs
        if p.get("run_cnt")]
print("| program | runs | ns per run |")
print("|---|---:|---:|")
for name, cnt, ns in sorted(rows, key=lambda r: -r[1]):
    if cnt >= 1000:
        print("| %s | %d | %.0f |" % (name, cnt, ns / cnt))
EOF
  echo
}
prog_table "$CALLS random 4 KiB preads of a cached file" "'$PREAD' '$FILE' $CALLS"
if command -v perf >/dev/null; then
  prog_table "perf bench sched pipe, 50,000 round trips (switches and wake-ups)" \
    "perf bench sched pipe -l 50000"
else
  echo "### perf bench sched pipe: n/a (no perf)"
fi

#!/usr/bin/env bash
# tests/bench/loader.sh — part of `make bench`: what tracing costs a real data
# loader, end to end, in the loader's own samples/s.
#
#   1. the bundled demo loader (build/tests/demo_loader DIR 2 6): it times the
#      read phases of its warm epochs itself ("samples_per_s=");
#   2. a PyTorch DataLoader (tests/progs/torch_loader.py, Debian's
#      python3-torch, /usr/bin/python3): 4 workers, 100 KB files in the page
#      cache, batches of 32; samples/s = samples / the loop's own
#      perf_counter() time, from the first batch on (interpreter start-up,
#      `import torch` and the workers' start excluded).
#
# Setups run interleaved round by round (untraced, traced, traced --no-sched,
# untraced, …) so drift hits all alike; the median per setup is reported,
# with the slowdown against untraced. A benchmark: nothing is asserted;
# what cannot run says "n/a (why)". Markdown on stdout, progress on stderr.
# Knobs: BENCH_LOADER_RUNS (5), BENCH_TORCH_FILES (5000).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GPUIO=${GPUIO:-$SRC/build/gpuio}
DEMO=$SRC/build/tests/demo_loader
TORCH_PY=/usr/bin/python3
TORCH_PROG=$SRC/tests/progs/torch_loader.py
RUNS=${BENCH_LOADER_RUNS:-5}
NFILES=${BENCH_TORCH_FILES:-5000}

say() { echo "bench: loader: $*" >&2; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "## Data loaders, traced vs untraced (samples/s as the loader measures it)"
echo
[ "$(id -u)" -eq 0 ] || { echo "n/a (needs root)"; exit 0; }
T=$(mktemp -d /var/tmp/gpuio-loader.XXXXXX) || exit 0
chmod 0755 "$T"
# gpuio runs a launched command as $SUDO_USER: let it write its output here
[ -n "${SUDO_USER:-}" ] && chown "$SUDO_USER" "$T" 2>/dev/null
trap 'rm -rf "$T"' EXIT

# run_setup NAME CMD...: the loader's samples/s, traced per NAME
run_setup() {
  local name=$1; shift
  rm -f "$T/torch.json"          # each run writes its own (torch_rate reads it)
  case $name in
    untraced) "$@" ;;
    traced) "$GPUIO" trace -q --no-export --capture "$T/c.gpuio" -- "$@" ;;
    no-sched) "$GPUIO" trace -q --no-sched --no-export --capture "$T/c.gpuio" -- "$@" ;;
  esac
}

# table TITLE EXTRACT CMD...: interleaved rounds of the three setups
table() {
  local title=$1 extract=$2; shift 2
  local setups="untraced traced no-sched" r s v
  declare -A vals=()
  for r in $(seq "$RUNS"); do
    for s in $setups; do
      say "$title: round $r, $s"
      v=$(run_setup "$s" "$@" 2>"$T/err" | $extract)
      [ -n "$v" ] || v=$($extract <"$T/err")
      vals[$s]="${vals[$s]:-} ${v:-}"
    done
  done
  local base
  base=$(median ${vals[untraced]})
  echo "### $title"
  echo
  echo "| setup | samples/s (median) | runs | slowdown |"
  echo "|---|---:|---|---:|"
  for s in $setups; do
    local m label
    m=$(median ${vals[$s]})
    case $s in
      untraced) label="untraced" ;;
      traced) label="gpuio trace (all layers)" ;;
      no-sched) label="gpuio trace --no-sched" ;;
    esac
    echo "| $label | $m |${vals[$s]} | $(awk -v b="$base" -v m="$m" 'BEGIN { if (b + 0 > 0 && m + 0 > 0) printf "%+.1f %%", (b - m) * 100 / b; else print "—" }') |"
  done
  echo
}

demo_rate() { grep -o 'samples_per_s=[0-9.]*' | cut -d= -f2; }
if [ -x "$DEMO" ]; then
  table "demo loader (2 workers, 8 shards of 4 MiB, 5 warm epochs)" demo_rate "$DEMO" "$T/demo" 2 6
else
  echo "### demo loader: n/a ($DEMO missing: make test-progs)"; echo
fi

torch_rate() { python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    # steady state: the first batch waits for the workers to start
    print("%.1f" % ((len(d["steps"]) - 1) * d["config"]["batch"] / (d["loop_s"] - d["first_wait_s"])))
except Exception:
    pass' "$T/torch.json"; }
if ! "$TORCH_PY" -c 'import torch' 2>/dev/null; then
  echo "### PyTorch DataLoader: n/a (no torch for $TORCH_PY: apt-get install python3-torch)"
else
  say "creating $NFILES files of 100 KB"
  "$TORCH_PY" "$TORCH_PROG" --data "$T/torch" --files "$NFILES" --file-size 102400 --create \
    --workers 4 --batch 32 --steps 1 --out "$T/torch.json" >/dev/null 2>&1
  cat "$T"/torch/* >/dev/null 2>&1 || cat "$T"/torch/*/* >/dev/null 2>&1
  table "PyTorch DataLoader (4 workers, $NFILES files of 100 KB, cached, batch 32, 2 epochs, persistent workers)" torch_rate \
    "$TORCH_PY" "$TORCH_PROG" --data "$T/torch" --files "$NFILES" --file-size 102400 \
    --workers 4 --batch 32 --epochs 2 --persistent --out "$T/torch.json"
fi

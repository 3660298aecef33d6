#!/usr/bin/env bash
# The README's first command (`make demo`): trace the bundled demo workload
# (data-loader workers reading shards, checkpoints with fsync) and say where
# the trace is and how to open it.
set -euo pipefail
cd "$(dirname "$0")/.."
# paths said relative to the tree, where `make demo` runs
out=${DEMO_OUT:-build/demo}
mkdir -p "$out"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo build/gpuio trace -o "$out/demo.json" -- build/tests/demo_loader "$out/data" 2 2
echo
# the answers first: what the job waited on (full text: build/gpuio report CAPTURE)
build/gpuio report --html "$out/demo-report.html" "$out/demo.gpuio" >/dev/null
build/gpuio report "$out/demo.gpuio" | sed -n '/^HEADLINES/,/^$/p'
echo
echo "Trace written: $out/demo.json  (capture: $out/demo.gpuio)"
echo "Open it: go to https://ui.perfetto.dev, 'Open trace file', pick demo.json"
echo "         (or chrome://tracing in Chrome). Re-export: build/gpuio convert $out/demo.gpuio -o demo.json.gz"
echo "Report: build/gpuio report $out/demo.gpuio   (page with charts: $out/demo-report.html)"

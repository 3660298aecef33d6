# tests/lib.sh — sourced by every tests/t_*.sh.
set -euo pipefail
GPUIO="${GPUIO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/gpuio}"
GPUIO_TESTS="${GPUIO_TESTS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/tests}"
GPUIO_SRC="${GPUIO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
CHECK="python3 $GPUIO_SRC/tests/check_trace.py"
TMP=$(mktemp -d /tmp/gpuio-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; }

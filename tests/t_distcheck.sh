#!/usr/bin/env bash
# t_distcheck: what is committed is enough. `git archive HEAD` unpacked into
# an empty directory builds and runs the demo (make demo: build, trace the
# bundled workload, export, report), so a file the build or the demo uses
# but git does not hold fails here. The source tree's build/ is not touched.
source "$(dirname "$0")/lib.sh"
need_root
command -v git > /dev/null || skip "git not installed"
git -C "$GPUIO_SRC" rev-parse --verify -q HEAD > /dev/null || skip "not a git checkout: nothing to archive"
mkdir -p "$TMP/dist"
git -C "$GPUIO_SRC" archive HEAD | tar -x -C "$TMP/dist" || fail "git archive HEAD failed"
make -C "$TMP/dist" -j2 demo > "$TMP/demo.log" 2>&1 || { tail -n 30 "$TMP/demo.log"; fail "make demo from git archive HEAD failed"; }
t=$(ls "$TMP"/dist/build/demo/*.json 2>/dev/null | head -1 || true)
[ -n "$t" ] || { tail -n 20 "$TMP/demo.log"; fail "the demo wrote no trace"; }
check_struct "$t"
tp_check "$t"
echo "PASS t_distcheck: git archive HEAD builds and runs the demo ($(basename "$t"))"

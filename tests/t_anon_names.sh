#!/usr/bin/env bash
# t_anon_names: files without an ordinary name get the name the kernel gives
# them in /proc/PID/fd, never "/" or a name that is another file's.
#
# tests/progs/anon_files writes and reads a memfd, an O_TMPFILE file, a file
# unlinked while open, a pipe and an eventfd, and prints each one's
# readlink(/proc/self/fd/N) (the ground truth) with the bytes it moved.
# Checked: with --all-fds every file's read and write calls carry exactly
# that name and those bytes; by default the memfd, the tmpfile and the
# unlinked file do, and the pipe and the eventfd are absent. The unlinked
# file was named when it was opened, before the unlink: its name is the
# kernel's without " (deleted)" (gpuio names a file once, at first sight).
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/anon_files"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"
mkdir -p "$TMP/d"

for mode in all default; do
  flags=(); [ $mode = all ] && flags=(--all-fds)
  "$GPUIO" trace -q "${flags[@]}" -o "$TMP/$mode.json" -- "$PROG" "$TMP/d" \
    >"$TMP/$mode.truth" 2>"$TMP/$mode.err" || { cat "$TMP/$mode.err"; fail "trace ($mode) failed"; }
  check_struct "$TMP/$mode.json"
  pycheck procs.anon_names "$TMP/$mode.json" "$TMP/$mode.truth" $mode || fail "names ($mode)"
done
echo "PASS t_anon_names"

#!/usr/bin/env bash
# t_syscalls: every traced file syscall, once, with known arguments.
#
# build/tests/sc_all makes each call (read, write, pread64, pwrite64, readv,
# writev, preadv, pwritev, preadv2, pwritev2, open, openat, openat2, creat,
# close, fsync, fdatasync, sync_file_range, fallocate, ftruncate, sendfile,
# copy_file_range, splice) through syscall(2) and prints, per call, what it
# passed and what the kernel returned. The trace must hold each call, in that
# order, with exactly those path/fd/bytes/requested/offset/length/flags/
# path2/fd2/offset2 values; the failing read (EBADF on an O_WRONLY fd) must
# carry errno+error and no bytes. A pipe write+read is absent by default and
# present with --all-fds. The program's stdout (a file the test opened, so
# inherited across the launch) must be named by its path too.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/sc_all"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"


bad=0
# default: the best mode here; then the syscall modes by name:
# per_syscall (--vfs-mode only: a tracepoint pair per decoded call) and
# sys:tp_btf (one pair on every syscall), where the kernel has them
for mode in default all-fds per_syscall sys:tp_btf; do
  d="$TMP/${mode//:/_}"
  mkdir -p "$d/files"
  opt=() cm=default
  case $mode in
    all-fds) opt=(--all-fds) cm=all-fds ;;
    sys:*|per_syscall) opt=(--vfs-mode="$mode") ;;
  esac
  if ! "$GPUIO" trace -q "${opt[@]}" -o "$d/run.json" -- "$PROG" "$d/files" >"$d/expect.jsonl" 2>"$d/gpuio.err"; then
    if [ "$cm" = default ] && [ "$mode" != default ] && grep -q "is not available on this kernel" "$d/gpuio.err"; then
      echo "$mode: not on this kernel, not checked: $(head -n1 "$d/gpuio.err")"
      continue
    fi
    cat "$d/gpuio.err"; fail "$mode: gpuio trace (or sc_all) exited non-zero"
  fi
  check_struct "$d/run.json"
  vm=$(grep -o '"vfs_mode":"[^"]*"' "$d/run.json" | head -n1)
  echo "$mode: $vm"
  case $mode in
    per_syscall) [[ $vm == *'"sys:each'* ]] || fail "per_syscall: traced in $vm, not sys:each" ;;
    sys:*) [[ $vm == *"\"$mode\""* ]] || fail "$mode: traced in $vm" ;;
  esac
  pycheck syscalls.sc_all "$d/run.json" "$d/expect.jsonl" "$cm" && rc=0 || rc=$?
  [ "$rc" -eq 0 ] || { echo "FAIL: $mode: trace does not match what sc_all did"; bad=1; }
done
[ "$bad" -eq 0 ] || fail "see above"
echo "PASS: every syscall traced with the arguments sc_all used"

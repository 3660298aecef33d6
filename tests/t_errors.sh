#!/usr/bin/env bash
# t_errors: every way `gpuio trace` can be refused ends with a short message
# that names the cause (and what to do), and a non-zero exit; launch mode
# passes the command's exit status through and runs it as SUDO_UID.
#
# Ground truth is the situation the test sets up: a uid without privileges,
# a pid that cannot exist (pid_max), a directory that does not exist or is
# on a read-only mount, a symlink, a command that does not exist, a shell
# that exits 7, and `id` run by the launched command.
source "$(dirname "$0")/lib.sh"
RO="$TMP/ro"
on_exit 'mountpoint -q "$RO" 2>/dev/null && umount "$RO"'

bad=0
# expect NAME WANT_RC REGEX_IN_STDERR [MAX_LINES] -- CMD...
# WANT_RC "nz" = any non-zero. Stderr must match REGEX (case-insensitive,
# extended) on one line, have at most MAX_LINES (default 1) lines, and every
# line must say who is talking (gpuio).
expect() {
  local name=$1 want=$2 re=$3 max=1 rc
  shift 3
  if [ "$1" != "--" ]; then max=$1; shift; fi
  shift
  set +e
  "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
  rc=$?
  set -e
  local lines
  lines=$(grep -c . "$TMP/err" || true)
  if { [ "$want" = nz ] && [ "$rc" -eq 0 ]; } || { [ "$want" != nz ] && [ "$rc" -ne "$want" ]; }; then
    echo "FAIL $name: exit $rc, want $want"; sed 's/^/     /' "$TMP/err"; bad=1; return
  fi
  if ! grep -qiE "$re" "$TMP/err"; then
    echo "FAIL $name: stderr does not say /$re/:"; sed 's/^/     /' "$TMP/err"; bad=1; return
  fi
  if [ "$lines" -gt "$max" ]; then
    echo "FAIL $name: $lines lines on stderr, want at most $max:"; sed 's/^/     /' "$TMP/err"; bad=1; return
  fi
  if grep -v -q "gpuio" "$TMP/err"; then
    echo "FAIL $name: a line does not say it comes from gpuio:"; sed 's/^/     /' "$TMP/err"; bad=1; return
  fi
  echo "ok   $name: exit $rc: $(head -n1 "$TMP/err")"
}

OUT="$TMP/o/run.json"
mkdir -p "$TMP/o"

# not root: as nobody, no capabilities (or as the unprivileged user running this)
if [ "$(id -u)" -ne 0 ]; then
  AS_NOBODY=()
elif command -v setpriv >/dev/null; then
  AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
else
  AS_NOBODY=(runuser -u nobody --)
fi
# (a launch or -p without root traces the GPU alone: t_no_bpf.sh; the whole
# node needs BPF)
expect "not root" nz "root.*(sudo|CAP_BPF)" -- "${AS_NOBODY[@]}" "$GPUIO" trace -a -d 1s -o "$TMP/never.json"
[ ! -e "$TMP/never.json" ] || { echo "FAIL not root: wrote $TMP/never.json"; bad=1; }

# usage errors: said before anything needs root
expect "pid not a number" nz "not a process id" -- "$GPUIO" trace -p 12ab -o "$OUT"
expect "unknown option" 2 "(unrecognized|unknown) option.*--bogus|--bogus.*(unrecognized|unknown)" 2 -- \
  "$GPUIO" trace --bogus -o "$OUT" -- true
grep -q -- "--help" "$TMP/err" || { echo "FAIL unknown option: no pointer to --help"; bad=1; }
expect "bad duration" 2 "duration.*abc" -- "$GPUIO" trace -d abc -o "$OUT" -- true
expect "zero duration" 2 "duration.*0" -- "$GPUIO" trace -d 0 -o "$OUT" -- true
expect "no target" 2 "(-p|pid).*(-a).*(command|--)" -- "$GPUIO" trace -o "$OUT"
expect "two targets" 2 "exactly one|one of" -- "$GPUIO" trace -a -p 1 -o "$OUT"
if [ "$(id -u)" -ne 0 ]; then
  [ "$bad" -eq 0 ] || fail "an error path is wrong (above)"
  skip "needs root for the rest (no such pid, output paths, BTF, launch mode); the not-root and usage-error checks passed"
fi

# no such pid: pids are always < pid_max
NOPID=$(cat /proc/sys/kernel/pid_max)
expect "no such pid" nz "no such process.*$NOPID" -- "$GPUIO" trace -p "$NOPID" -o "$OUT"
expect "output name" 2 "\.json" -- "$GPUIO" trace -o "$TMP/o/run.txt" -- true

# output directory missing / not writable (a read-only mount: root ignores modes)
expect "output dir missing" nz "$TMP/nonexistent.*(does not exist|no such)" -- \
  "$GPUIO" trace -o "$TMP/nonexistent/run.json" -- true
mkdir -p "$RO"
if mount -t tmpfs -o ro,size=1m gpuio-test-ro "$RO" 2>/dev/null; then
  expect "output dir read-only" nz "$RO.*(permission|read-only|not writable)" -- "$GPUIO" trace -o "$RO/run.json" -- true
  expect "capture dir read-only" nz "$RO.*(permission|read-only|not writable)" -- \
    "$GPUIO" trace --capture "$RO/run.gpuio" -o "$OUT" -- true
else
  echo "SKIP (only this check): cannot mount a read-only tmpfs"
fi

# output or capture is a symlink: refused, nothing written through it
ln -s "$TMP/o/victim.json" "$TMP/o/link.json"
expect "output is a symlink" nz "link.json.*symbolic link|symlink" -- "$GPUIO" trace -o "$TMP/o/link.json" -- true
[ ! -e "$TMP/o/victim.json" ] || { echo "FAIL output is a symlink: wrote through it"; bad=1; }
ln -s "$TMP/o/victim.gpuio" "$TMP/o/link2.gpuio"
expect "capture is a symlink" nz "link2.gpuio.*symbolic link|symlink" -- \
  "$GPUIO" trace --capture "$TMP/o/link2.gpuio" -o "$TMP/o/x.json" -- true
[ ! -e "$TMP/o/victim.gpuio" ] || { echo "FAIL capture is a symlink: wrote through it"; bad=1; }

# kernel without BTF: hide /sys/kernel/btf in a private mount namespace
expect "kernel without BTF" nz "no BTF.*CONFIG_DEBUG_INFO_BTF" -- \
  unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && exec "$0" "$@"' \
  "$GPUIO" trace -o "$TMP/o/nobtf.json" -- true
[ ! -e "$TMP/o/nobtf.gpuio" ] || { echo "FAIL kernel without BTF: a capture was written"; bad=1; }

# launched command does not exist: 127, like a shell
expect "command not found" 127 "/nonexistent.*(no such file|not found)" 2 -- \
  "$GPUIO" trace -q -o "$OUT" -- "$TMP/nonexistent"
# launch mode returns the command's status
set +e
"$GPUIO" trace -q -o "$OUT" -- sh -c 'exit 7' 2>"$TMP/err"; rc=$?
set -e
[ "$rc" -eq 7 ] && echo "ok   exit status: sh -c 'exit 7' -> $rc" || { echo "FAIL exit status: $rc, want 7"; cat "$TMP/err"; bad=1; }
set +e
"$GPUIO" trace -q -o "$OUT" -- sh -c 'kill -TERM $$' 2>"$TMP/err"; rc=$?
set -e
[ "$rc" -eq 143 ] && echo "ok   killed by SIGTERM -> $rc" || { echo "FAIL killed by SIGTERM: $rc, want 143"; cat "$TMP/err"; bad=1; }

# SUDO_UID/SUDO_GID: the command runs as that user, outputs belong to them
U="$TMP/u"
mkdir -p "$U"
chmod o+x "$TMP"
chmod 1777 "$U"
set +e
SUDO_USER=nobody SUDO_UID=65534 SUDO_GID=65534 "$GPUIO" trace -q -o "$U/run.json" -- \
  sh -c 'id -u >"$0/uid"; id -g >"$0/gid"; id -G >"$0/groups"' "$U" 2>"$TMP/err"; rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  echo "FAIL sudo: gpuio exited $rc"; cat "$TMP/err"; bad=1
else
  [ "$(cat "$U/uid")" = 65534 ] && [ "$(cat "$U/gid")" = 65534 ] \
    && echo "ok   sudo: the command ran as uid/gid $(cat "$U/uid")/$(cat "$U/gid")" \
    || { echo "FAIL sudo: command ran as uid $(cat "$U/uid") gid $(cat "$U/gid"), want 65534"; bad=1; }
  grep -qw 0 "$U/groups" && { echo "FAIL sudo: the command kept group 0: $(cat "$U/groups")"; bad=1; } \
    || echo "ok   sudo: groups $(cat "$U/groups")"
  for f in "$U/run.json" "$U/run.gpuio"; do
    own=$(stat -c %u:%g "$f" 2>/dev/null || echo missing)
    [ "$own" = 65534:65534 ] && echo "ok   sudo: $(basename "$f") owned by $own" \
      || { echo "FAIL sudo: $f owned by $own, want 65534:65534"; bad=1; }
  done
fi

[ "$bad" -eq 0 ] || fail "see above"
echo "PASS: every error path gives one clear line and a non-zero exit; launch mode keeps the command's status and user"

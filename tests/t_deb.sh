#!/usr/bin/env bash
# t_deb: `make deb`'s package (scripts/deb/build-deb.sh: debhelper,
# dpkg-buildpackage, lintian without errors) installs with dpkg -i and works
# from the installed paths:
#  - /usr/bin/gpuio --version is the package's version; `gpuio doctor` runs;
#  - the installed binary traces a known workload (tests/progs/known_io: its
#    files and bytes are in the trace);
#  - the man pages render; the PerfettoSQL views are in /usr/share/gpuio;
#    the monitor's unit is in /lib/systemd/system and
#    not enabled;
#  - dpkg -P removes every file dpkg -L listed.
source "$(dirname "$0")/lib.sh"
need_root
command -v dpkg-buildpackage >/dev/null || skip "dpkg-buildpackage not installed (scripts/install-deps.sh all)"
if dpkg-query -W -f='${Status}' gpuio 2>/dev/null | has 'install ok installed'; then
  skip "a gpuio package is already installed here: not replacing it"
fi
on_exit 'dpkg -P gpuio > /dev/null 2>&1 || true'
"$GPUIO_SRC/scripts/deb/build-deb.sh" "$TMP/deb" > "$TMP/build.out" 2> "$TMP/build.err" ||
  { cat "$TMP/build.err"; fail "build-deb.sh failed"; }
DEB=$(tail -n1 "$TMP/build.out")
[ -f "$DEB" ] || fail "no package: $DEB"
grep -q '^E: ' "$TMP/deb/lintian.txt" && { cat "$TMP/deb/lintian.txt"; fail "lintian errors"; }
echo "lintian: $(grep -c '^W: ' "$TMP/deb/lintian.txt" || true) warnings, 0 errors"
VERSION=$(dpkg-deb -f "$DEB" Version)
dpkg -i "$DEB" > "$TMP/dpkg.out" 2>&1 || { cat "$TMP/dpkg.out"; fail "dpkg -i failed"; }
dpkg -L gpuio > "$TMP/files"
for f in /usr/bin/gpuio /lib/systemd/system/gpuio-monitor.service /usr/share/man/man1/gpuio-trace.1.gz \
         /usr/share/man/man1/gpuio-monitor.1.gz /usr/share/doc/gpuio/copyright /usr/share/gpuio/gpuio.sql; do
  grep -qxF "$f" "$TMP/files" || fail "the package has no $f"
done
[ "$(/usr/bin/gpuio --version)" = "gpuio $VERSION" ] || fail "installed gpuio --version: $(/usr/bin/gpuio --version), package $VERSION"
if [ -e "$GPUIO_SRC/build/libgpuio-cupti.so" ]; then
  grep -qxF /usr/lib/gpuio/libgpuio-cupti.so "$TMP/files" || fail "the CUPTI collector is not packaged"
fi
# the unit is there, pointing at the installed binary, and not enabled
grep -q '^ExecStart=/usr/bin/gpuio monitor' /lib/systemd/system/gpuio-monitor.service || fail "unit ExecStart"
[ ! -e /etc/systemd/system/multi-user.target.wants/gpuio-monitor.service ] || fail "the unit is enabled"
# doctor: exit 0 (all fine) or 1 (something to fix, said) — not a crash
rc=0; /usr/bin/gpuio doctor > "$TMP/doctor.out" 2>&1 || rc=$?
[ $rc -le 1 ] && grep -qi "kernel" "$TMP/doctor.out" || { cat "$TMP/doctor.out"; fail "installed gpuio doctor: rc $rc"; }
# a real trace from the installed binary
mkdir -p "$TMP/w"
/usr/bin/gpuio trace -q -o "$TMP/k.json" -- "$GPUIO_TESTS/known_io" "$TMP/w" > /dev/null 2> "$TMP/k.err" ||
  { cat "$TMP/k.err"; fail "installed gpuio trace failed"; }
pycheck io_truth.known_io_writes "$TMP/k.json" "$TMP/w" ||
  fail "the installed binary's trace misses the workload's writes"
MANPAGER=cat man -l /usr/share/man/man1/gpuio-trace.1.gz 2>/dev/null | has DESCRIPTION || fail "man gpuio-trace does not render"
# removal: nothing left of what was installed
dpkg -P gpuio > "$TMP/purge.out" 2>&1 || { cat "$TMP/purge.out"; fail "dpkg -P failed"; }
left=$(while read -r f; do if [ -f "$f" ]; then echo "$f"; fi; done < "$TMP/files")
[ -z "$left" ] || fail "left after dpkg -P: $left"
echo "package $VERSION: built, lintian clean of errors, installed, used, removed"

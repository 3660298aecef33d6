#!/usr/bin/env bash
# t_install: `make install` into a DESTDIR gives a gpuio that works from
# there, and `make uninstall` takes every file back.
#  - the installed binary traces a known workload (tests/progs/known_io:
#    its file and bytes are in the trace), converts to .pftrace (imported
#    by Perfetto's trace_processor where present) and reports;
#  - the GPU launch path: with the stand-in driver, the installed binary
#    gives the command the INSTALLED collector (PREFIX/lib/gpuio, found
#    beside the binary), whose status record lands in the capture; with that
#    file removed, no collector runs (so it was that file);
#  - every man page renders with man -l (NAME and DESCRIPTION sections);
#  - the PerfettoSQL views (share/gpuio/gpuio.sql) are installed and load
#    in trace_processor as the module gpuio.gpuio (where it is present);
#  - make uninstall leaves no file under the DESTDIR.
source "$(dirname "$0")/lib.sh"
need_root
ROOT="$TMP/root"; PREFIX=/usr/local; BIN="$ROOT$PREFIX/bin/gpuio"
make -s -C "$GPUIO_SRC" install DESTDIR="$ROOT" PREFIX="$PREFIX" > "$TMP/install.log" 2>&1 \
  || { cat "$TMP/install.log"; fail "make install failed"; }
[ -x "$BIN" ] || fail "no $BIN"
[ "$(readlink -f "$BIN")" != "$(readlink -f "$GPUIO")" ] || fail "installed binary is the build's"

# the installed binary end to end
mkdir -p "$TMP/w"
"$BIN" trace -q -o "$TMP/k.json" -- "$GPUIO_TESTS/known_io" "$TMP/w" > "$TMP/k.out" 2> "$TMP/k.err" \
  || { cat "$TMP/k.err"; fail "installed gpuio trace failed"; }
check_struct "$TMP/k.json"
pycheck io_truth.known_io_writes "$TMP/k.json" "$TMP/w" ||
  fail "the installed binary's trace misses the workload's writes"
"$BIN" convert -q "$TMP/k.gpuio" -o "$TMP/k.pftrace" || fail "installed convert failed"
tp_check "$TMP/k.pftrace"
"$BIN" report "$TMP/k.gpuio" > "$TMP/k.report" || fail "installed report failed"
grep -q "$TMP/w" "$TMP/k.report" || fail "the report does not name the workload's files"

# the PerfettoSQL views, installed where docs/sql.md says, load as a module
SQL="$ROOT$PREFIX/share/gpuio/gpuio.sql"
[ -f "$SQL" ] || fail "no $SQL"
cmp -s "$SQL" "$GPUIO_SRC/user/export/sql/gpuio.sql" || fail "$SQL is not user/export/sql/gpuio.sql"
if TP=$(tp_path); then
  printf '%s\n' "INCLUDE PERFETTO MODULE gpuio.gpuio;" \
    "select count(*) as n, sum(bytes) as b from gpuio_file_calls where path = '$TMP/w/w.dat' and call = 'write';" > "$TMP/sql.q"
  "$TP" --add-sql-package "$ROOT$PREFIX/share/gpuio" -q "$TMP/sql.q" "$TMP/k.pftrace" > "$TMP/sql.out" 2> "$TMP/sql.err" ||
    { cat "$TMP/sql.err"; fail "the installed gpuio.sql does not load as module gpuio.gpuio"; }
  grep -qx '16,65536' "$TMP/sql.out" || { cat "$TMP/sql.out"; fail "installed views: w.dat writes are not known_io's 16 x 4096"; }
  echo "installed gpuio.sql: module gpuio.gpuio, w.dat writes 16 x 4096"
else
  tp_note "the installed gpuio.sql"
fi

# the GPU launch path, the installed collector
LIB="$ROOT$PREFIX/lib/gpuio/libgpuio-cupti.so"
FAKE="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
if [ -f "$LIB" ]; then
  "$BIN" trace -o "$TMP/g.json" -- "$GPUIO_TESTS/fake_libcuda_calls" "$FAKE" > "$TMP/g.out" 2> "$TMP/g.err" \
    || { cat "$TMP/g.err"; fail "installed GPU launch trace failed"; }
  "$BIN" info --json "$TMP/g.gpuio" > "$TMP/g.info" || fail "info"
  pycheck gpu_runs.installed_collector "$TMP/g.info" || { cat "$TMP/g.err"; fail "no status record from the installed collector"; }
  mv "$LIB" "$TMP/moved.so"
  "$BIN" trace -o "$TMP/h.json" -- "$GPUIO_TESTS/fake_libcuda_calls" "$FAKE" > /dev/null 2> "$TMP/h.err" || true
  "$BIN" info --json "$TMP/h.gpuio" > "$TMP/h.info" || fail "info"
  pycheck gpu_runs.no_collector "$TMP/h.info" || fail "a collector ran without the installed one: not the installed file"
  mv "$TMP/moved.so" "$LIB"
  echo "installed collector: found beside the binary, status record in the capture"
else
  echo "no CUDA toolkit: libgpuio-cupti.so not built, GPU launch path not checked"
fi

# man pages
for p in gpuio gpuio-trace gpuio-convert gpuio-info gpuio-report gpuio-merge gpuio-monitor gpuio-inject gpuio-doctor gpuio-mcp; do
  f="$ROOT$PREFIX/share/man/man1/$p.1"
  [ -f "$f" ] || fail "man page $p not installed"
  MANPAGER=cat MANWIDTH=80 man -l "$f" > "$TMP/$p.txt" 2> "$TMP/man.err" || { cat "$TMP/man.err"; fail "man -l $p"; }
  grep -q '^NAME' "$TMP/$p.txt" && grep -q '^DESCRIPTION' "$TMP/$p.txt" \
    || { head "$TMP/$p.txt"; fail "man page $p lacks NAME or DESCRIPTION"; }
done
grep -q -- '--pid' "$TMP/gpuio-trace.txt" || fail "gpuio-trace(1) does not describe -p/--pid"

make -s -C "$GPUIO_SRC" uninstall DESTDIR="$ROOT" PREFIX="$PREFIX" > "$TMP/uninstall.log" 2>&1 \
  || { cat "$TMP/uninstall.log"; fail "make uninstall failed"; }
left=$(find "$ROOT" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "PASS t_install: installed, ran, rendered, uninstalled"

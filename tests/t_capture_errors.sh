#!/usr/bin/env bash
# Bad inputs and bad output paths for `gpuio convert` / `gpuio info`:
#   truncated capture   -> exit 0, a warning naming the cut, only whole records
#   corrupt capture     -> exit 1, "corrupt record at offset N", no output left
#   not a capture, missing file, directory, empty file -> exit 1, clear message
#   header only         -> a valid, empty trace that says drops are unknown
#   unwritable dir, missing dir, output is a symlink or a directory -> exit 1
#   usage errors        -> exit 2
# Offsets and counts come from gen_capture's manifest.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x "$GPUIO" ] || fail "missing $GPUIO (run: make)"

jq_py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# run CMD..., expecting exit code $1; stderr in $TMP/err
expect_rc() {
  local want=$1; shift
  local rc=0
  "$@" > "$TMP/out" 2> "$TMP/err" || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$TMP/err"; fail "'$*' exited $rc, want $want"; }
}
err_has() { grep -q -- "$1" "$TMP/err" || { cat "$TMP/err"; fail "stderr lacks '$1'"; }; }
one_line() { [ "$(grep -c . "$TMP/err")" -eq 1 ] || { cat "$TMP/err"; fail "error is not one line"; }; }

# --- truncated: converts what is whole, warns where it was cut
"$GEN" truncate "$TMP/t.gpuio" > "$TMP/t.manifest"
off=$(jq_py "$TMP/t.manifest" 'd["cut_offset"]')
part=$(jq_py "$TMP/t.manifest" 'd["partial_bytes"]')
nvfs=$(jq_py "$TMP/t.manifest" 'd["vfs_whole"]')
expect_rc 0 "$GPUIO" convert "$TMP/t.gpuio" -o "$TMP/t.json"
err_has "capture cut short at offset $off: $part bytes of a partial record ignored"
$CHECK "$TMP/t.json" > /dev/null || fail "truncated export rejected by check_trace"
pycheck export_gen.truncated "$TMP/t.json" "$nvfs" || fail "truncated export content"
expect_rc 0 "$GPUIO" info "$TMP/t.gpuio"
grep -q "(no final stats: capture cut short)" "$TMP/out" || fail "info does not say the stats are not final"
grep -q "cut short at offset $off: $part bytes" "$TMP/out" || fail "info does not report the cut"
expect_rc 0 "$GPUIO" info --json "$TMP/t.gpuio"
pycheck export_gen.info_truncated "$TMP/out" "$off" "$part" || fail "info --json on a truncated capture"

# --- corrupt: refused, nothing left under the output name
"$GEN" corrupt "$TMP/c.gpuio" > "$TMP/c.manifest"
coff=$(jq_py "$TMP/c.manifest" 'd["corrupt_offset"]')
expect_rc 1 "$GPUIO" convert "$TMP/c.gpuio" -o "$TMP/c.json"
err_has "corrupt record at offset $coff"
one_line
[ ! -e "$TMP/c.json" ] && [ ! -e "$TMP/c.json.tmp" ] || fail "a failed export left a file behind"
expect_rc 1 "$GPUIO" info "$TMP/c.gpuio"
err_has "corrupt"
grep -q "records      $(jq_py "$TMP/c.manifest" 'd["records_before"]'):" "$TMP/out" ||
  fail "info does not count the records before the damage"

# --- inputs that are not captures
printf 'hello, not a capture\n' > "$TMP/text.gpuio"
expect_rc 1 "$GPUIO" convert "$TMP/text.gpuio" -o "$TMP/x.json"; err_has "not a gpuio capture"; one_line
: > "$TMP/empty.gpuio"
expect_rc 1 "$GPUIO" convert "$TMP/empty.gpuio" -o "$TMP/x.json"; err_has "not a gpuio capture"
expect_rc 1 "$GPUIO" convert "$TMP/missing.gpuio" -o "$TMP/x.json"; err_has "No such file"; one_line
expect_rc 1 "$GPUIO" convert "$TMP" -o "$TMP/x.json"; err_has "is a directory"; one_line
expect_rc 1 "$GPUIO" info "$TMP/missing.gpuio"; err_has "No such file"
"$GEN" basic "$TMP/b.gpuio" > /dev/null
[ ! -e "$TMP/x.json" ] || fail "failed conversions created output"

# --- a header and nothing else: valid, empty, drops unknown (never "0 dropped")
head -c "$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(16); print(struct.unpack("<I", d[12:16])[0])' "$TMP/b.gpuio")" \
  "$TMP/b.gpuio" > "$TMP/hdr.gpuio"
expect_rc 0 "$GPUIO" convert "$TMP/hdr.gpuio" -o "$TMP/hdr.json"
$CHECK "$TMP/hdr.json" > /dev/null || fail "header-only export rejected"
pycheck export_gen.header_only "$TMP/hdr.json" || fail "header-only capture must report unknown drops"

# --- output paths
expect_rc 1 "$GPUIO" convert "$TMP/b.gpuio" -o "$TMP/no/such/dir/x.json"; err_has "No such file"; one_line
echo precious > "$TMP/victim"
ln -s "$TMP/victim" "$TMP/link.json"
expect_rc 1 "$GPUIO" convert "$TMP/b.gpuio" -o "$TMP/link.json"; err_has "symbolic link"; one_line
[ "$(cat "$TMP/victim")" = precious ] || fail "the symlink's target was written"
[ -L "$TMP/link.json" ] || fail "the symlink was replaced"
mkdir "$TMP/dir.json"
expect_rc 1 "$GPUIO" convert "$TMP/b.gpuio" -o "$TMP/dir.json"; err_has "not a regular file"
# a planted OUT.tmp symlink is not written through either
ln -s "$TMP/victim" "$TMP/p.json.tmp"
expect_rc 0 "$GPUIO" convert "$TMP/b.gpuio" -o "$TMP/p.json"
[ "$(cat "$TMP/victim")" = precious ] || fail "OUT.tmp symlink was written through"
$CHECK "$TMP/p.json" > /dev/null || fail "export next to a planted OUT.tmp"
# an existing output is replaced whole
echo old > "$TMP/r.json"
expect_rc 0 "$GPUIO" convert "$TMP/b.gpuio" -o "$TMP/r.json"
$CHECK "$TMP/r.json" > /dev/null || fail "replaced output is not a valid trace"
# unwritable directory (as nobody when root: root may write anywhere)
mkdir "$TMP/ro"
chmod 555 "$TMP/ro"
chmod 755 "$TMP"
chmod 644 "$TMP/b.gpuio"
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv > /dev/null; then
    expect_rc 1 setpriv --reuid=65534 --regid=65534 --clear-groups "$GPUIO" convert "$TMP/b.gpuio" -o "$TMP/ro/x.json"
    err_has "Permission denied"; one_line
  else
    echo "note: setpriv missing, unwritable-directory case not run as non-root"
  fi
  # disk full: a clear error, and neither OUT nor OUT.tmp left behind
  mkdir "$TMP/small"
  if mount -t tmpfs -o size=64k gpuio-test "$TMP/small" 2>/dev/null; then
    "$GEN" big "$TMP/big.gpuio" 20000 > /dev/null
    rc=0
    "$GPUIO" convert "$TMP/big.gpuio" -o "$TMP/small/big.json" 2> "$TMP/err" || rc=$?
    leftover=$(ls -A "$TMP/small")
    umount "$TMP/small"
    [ "$rc" -eq 1 ] || { cat "$TMP/err"; fail "convert on a full disk exited $rc, want 1"; }
    err_has "No space left on device"; err_has "disk full"; one_line
    [ -z "$leftover" ] || fail "a full disk left '$leftover' behind"
  else
    echo "note: cannot mount a small tmpfs here; disk-full case not run"
  fi
  # under sudo the output belongs to the invoking user
  expect_rc 0 env SUDO_UID=65534 SUDO_GID=65534 "$GPUIO" convert "$TMP/b.gpuio" -o "$TMP/own.json"
  [ "$(stat -c %u:%g "$TMP/own.json")" = "65534:65534" ] || fail "output not chowned to SUDO_UID:SUDO_GID"
else
  expect_rc 1 "$GPUIO" convert "$TMP/b.gpuio" -o "$TMP/ro/x.json"; err_has "Permission denied"; one_line
fi

# --- usage errors exit 2, --help exits 0
expect_rc 2 "$GPUIO" convert
expect_rc 2 "$GPUIO" convert "$TMP/b.gpuio" -o
expect_rc 2 "$GPUIO" convert "$TMP/b.gpuio" -o "$TMP/x.txt"; err_has ".json or .json.gz"
expect_rc 2 "$GPUIO" convert --frobnicate "$TMP/b.gpuio"
expect_rc 2 "$GPUIO" convert "$TMP/b.gpuio" "$TMP/c.gpuio"
expect_rc 2 "$GPUIO" info
expect_rc 0 "$GPUIO" convert --help
grep -q "usage: gpuio convert" "$TMP/out" || fail "convert --help"
expect_rc 0 "$GPUIO" info --help
echo "bad captures and bad outputs are refused clearly"

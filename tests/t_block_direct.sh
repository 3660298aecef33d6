#!/usr/bin/env bash
# t_block_direct: O_DIRECT I/O on an ext4 image on a loop device gives exact
# block requests, each joined to the VFS call that caused it.
#
# fio does 4 KiB O_DIRECT random reads (4 MiB) and 64 KiB O_DIRECT
# sequential writes (4 MiB) on files laid out beforehand (untraced). Ground
# truth: fio's io_bytes/total_ios, and the files' physical extents
# (filefrag). Checks:
#   - read/write bytes and request counts on the loop disk == fio's;
#   - every such request has bind_id + flow_in, and the VFS slice with the
#     same bind_id + flow_out is fio's pread64/pwrite64 on the job's file,
#     same pid, and the request lies inside the call;
#   - per VFS call, its requests' bytes sum to the call's bytes;
#   - each request's sector is where filefrag says the call's file offset is;
#   - the checker accepts the trace (flows bound).
source "$(dirname "$0")/lib.sh"
need_root
command -v fio >/dev/null || skip "fio not installed"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"
command -v filefrag >/dev/null || skip "filefrag (e2fsprogs) not installed"

LOOP=""
MNT="$TMP/mnt"
on_exit '[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null'
on_exit 'mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"'

truncate -s 96M "$TMP/img"
mkfs.ext4 -q -F -b 4096 "$TMP/img" || fail "mkfs.ext4 failed"
LOOP=$(losetup -f --show "$TMP/img") || skip "no loop device available (losetup -f failed)"
mkdir -p "$MNT"
mount -o noatime "$LOOP" "$MNT" || fail "mount $LOOP failed"
DISK=$(basename "$LOOP")

cat >"$TMP/job.fio" <<EOF
[global]
directory=$MNT
size=4m
direct=1
ioengine=psync

[dread]
rw=randread
bs=4k

[dwrite]
rw=write
bs=64k
EOF
fio "$TMP/job.fio" --create_only=1 >"$TMP/layout.out" 2>&1 || { cat "$TMP/layout.out"; fail "fio layout failed"; }
sync
for f in dread.0.0 dwrite.0.0; do
  filefrag -v -b512 "$MNT/$f" >"$TMP/$f.frag" || fail "filefrag $f failed"
done

"$GPUIO" trace -q -o "$TMP/run.json" -- \
  fio "$TMP/job.fio" --output-format=json --output="$TMP/fio.json" 2>"$TMP/gpuio.err" \
  || { cat "$TMP/gpuio.err"; fail "gpuio trace -- fio exited non-zero"; }
cat "$TMP/gpuio.err"
check_struct "$TMP/run.json"

pycheck fio_truth.block_direct "$TMP/run.json" "$TMP/fio.json" "$MNT" "$DISK" "$TMP" ||
  fail "block requests do not match fio's O_DIRECT I/O"
echo "PASS: block requests on $DISK equal fio's O_DIRECT I/O, each joined to its syscall"

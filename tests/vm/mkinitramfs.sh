#!/usr/bin/env bash
# tests/vm/mkinitramfs.sh — pack the guest's initramfs (newc cpio, uncompressed:
# the kernel would spend longer inflating it under TCG than QEMU spends loading).
#
#   mkinitramfs.sh OUT.cpio MODULES_DIR [BINARY...]
#
# Layout:  /init                tests/vm/init
#          /tests/guest-tests.sh the list of guest checks (data, see README.md)
#          /bin/busybox         + applet links made by /init at boot
#          /bin/NAME            each BINARY (build/gpuio-static -> /bin/gpuio)
#          /lib/modules/*.ko    + load.list (from scripts/vm-kernel.sh)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OUT.cpio MODULES_DIR [BINARY...]" >&2; exit 2; }
out=$1 mods=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
busybox=${BUSYBOX:-/bin/busybox}

# busybox-static's /bin/busybox; a dynamic one would not run in the guest.
if ! LC_ALL=C readelf -d "$busybox" 2>/dev/null | grep -q 'There is no dynamic section'; then
  echo "mkinitramfs: $busybox is not statically linked (apt-get install busybox-static)" >&2
  exit 1
fi
[ -r "$mods/load.list" ] || { echo "mkinitramfs: no $mods/load.list (run scripts/vm-kernel.sh)" >&2; exit 1; }

root=$(mktemp -d "${TMPDIR:-/tmp}/gpuio-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,mnt/vda,lib/modules,tests,run}
install -m 0755 "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
install -m 0755 "$here/init" "$root/init"
# GPUIO_VM_GUEST_TESTS=FILE packs another check list (experiments).
install -m 0755 "${GPUIO_VM_GUEST_TESTS:-$here/guest-tests.sh}" "$root/tests/guest-tests.sh"
cp "$mods"/*.ko "$mods/load.list" "$root/lib/modules/"
for b in "$@"; do
  name=$(basename "$b")
  [ "$name" = gpuio-static ] && name=gpuio
  if LC_ALL=C readelf -d "$b" 2>/dev/null | grep -q NEEDED; then
    echo "mkinitramfs: $b is dynamically linked; the guest has no libraries" >&2
    exit 1
  fi
  install -m 0755 "$b" "$root/bin/$name"
done
# /dev/console must exist before devtmpfs is mounted, for init's first output.
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true

tmp="$out.tmp"
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 --reproducible) > "$tmp"
mv "$tmp" "$out"
names=$(for f in "$root"/bin/*; do case "${f##*/}" in busybox|sh) ;; *) printf '%s ' "${f##*/}" ;; esac; done)
echo "mkinitramfs: $out ($(du -k "$out" | cut -f1) KiB; /bin: busybox $names)" >&2

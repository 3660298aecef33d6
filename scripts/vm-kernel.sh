#!/usr/bin/env bash
# scripts/vm-kernel.sh — fetch the stock Debian 6.1 kernel that `make vmtest`
# boots under QEMU, and the few modules its initramfs needs.
#
#   scripts/vm-kernel.sh [OUTDIR]          (default: build/vm/kernel)
#
# Writes, into OUTDIR:
#   vmlinuz            the kernel image
#   config             its .config (for reference)
#   modules/*.ko       the modules below plus their dependencies, decompressed
#                      (busybox insmod cannot read .ko.xz/.ko.zst)
#   modules/load.list  those modules in load order (dependencies first)
#   release            "PACKAGE VERSION UNAME_R", the cache key
#
# The package is pinned (GPUIO_VM_KPKG / GPUIO_VM_KVER below, overridable from
# the environment).  When the pinned version has left the apt index, the newest
# linux-image-6.1.0-N-amd64 on offer is used instead, and the script says so.
# Nothing is installed on the host: `apt-get download` + `dpkg-deb -x`.
# A second run with the same pin is a no-op (no network).
set -euo pipefail

PIN_PKG="${GPUIO_VM_KPKG:-linux-image-6.1.0-56-amd64}"
PIN_VER="${GPUIO_VM_KVER:-6.1.192-2}"
# What the guest needs: the virtio disk (virtio_pci, virtio_blk), ext4 on it,
# loop devices, and crc32c for ext4's metadata_csum (a softdep modinfo does
# not list in depends=).  Dependencies are resolved from each module's modinfo.
WANT_MODS=(virtio_pci virtio_blk loop crc32c_generic ext4)

OUT="${1:-build/vm/kernel}"
say() { echo "vm-kernel: $*" >&2; }
die() { echo "vm-kernel: error: $*" >&2; exit 1; }

# ---- cache: pinned release already extracted -> done, without touching apt ----
have_release() { [ -r "$OUT/release" ] && [ -r "$OUT/vmlinuz" ] && [ -r "$OUT/modules/load.list" ]; }
if have_release && [ "$(cut -d' ' -f1-2 "$OUT/release")" = "$PIN_PKG $PIN_VER" ]; then
  exit 0
fi

for tool in apt-get apt-cache dpkg-deb objcopy; do
  command -v "$tool" >/dev/null || die "$tool not found"
done

# ---- choose package=version ----
available() { # PKG VER -> 0 when apt can download exactly that
  apt-cache madison "$1" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | grep -qxF "$2"
}
newest_61() { # prints "PKG VER" of the newest stock (not rt/cloud) 6.1 image
  apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null |
    cut -d' ' -f1 | sort -t- -k4,4n | tail -n1 |
    while read -r p; do
      v=$(apt-cache policy "$p" | sed -n 's/^ *Candidate: *//p')
      [ -n "$v" ] && [ "$v" != "(none)" ] && echo "$p $v"
    done
}

pkg="$PIN_PKG" ver="$PIN_VER"
if ! available "$pkg" "$ver"; then
  say "$pkg=$ver not in the apt index; running apt-get update"
  apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed (continuing with the index we have)"
fi
if ! available "$pkg" "$ver"; then
  read -r npkg nver < <(newest_61) || true
  [ -n "${npkg:-}" ] || die "no linux-image-6.1.0-*-amd64 in the apt index (pinned $PIN_PKG=$PIN_VER)"
  say "PINNED KERNEL $PIN_PKG=$PIN_VER HAS LEFT THE APT INDEX; using the newest 6.1 on offer: $npkg=$nver"
  say "(update GPUIO_VM_KPKG/GPUIO_VM_KVER in scripts/vm-kernel.sh to pin it)"
  pkg=$npkg ver=$nver
  if have_release && [ "$(cut -d' ' -f1-2 "$OUT/release")" = "$pkg $ver" ]; then
    exit 0
  fi
fi

# ---- download + extract ----
mkdir -p "$OUT"
work=$(mktemp -d "$OUT/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "downloading $pkg=$ver"
# apt's _apt user cannot write into a root-only build dir; download as root.
(cd "$work" && apt-get download -o APT::Sandbox::User=root -qq "$pkg=$ver") ||
  die "apt-get download $pkg=$ver failed"
deb=$(ls "$work"/*.deb)
say "extracting $(basename "$deb")"
dpkg-deb -x "$deb" "$work/x"
rm -f "$deb"

vmlinuz=$(ls "$work"/x/boot/vmlinuz-* 2>/dev/null | head -n1)
[ -n "$vmlinuz" ] || die "no /boot/vmlinuz-* in $pkg"
uname_r=${vmlinuz##*/vmlinuz-}
moddir="$work/x/lib/modules/$uname_r"
[ -d "$moddir/kernel" ] || die "no modules in $pkg"

stage="$work/out"
mkdir -p "$stage/modules"
cp "$vmlinuz" "$stage/vmlinuz"
cp "$work/x/boot/config-$uname_r" "$stage/config" 2>/dev/null || true

# ---- resolve module dependencies (the .deb ships no modules.dep) ----
# Module names treat '-' and '_' alike; files may be .ko, .ko.xz, .ko.zst, .ko.gz.
find "$moddir/kernel" -name '*.ko*' > "$work/all-modules"
find_mod() {
  local n="${1//-/_}"
  awk -v n="$n" '{ f=$0; sub(/.*\//,"",f); sub(/\.ko(\.(xz|zst|gz))?$/,"",f); gsub(/-/,"_",f); if (f==n) { print; exit } }' "$work/all-modules"
}
is_builtin() {
  local n="${1//-/_}"
  [ -r "$moddir/modules.builtin" ] && sed 's|.*/||; s|\.ko$||; s|-|_|g' "$moddir/modules.builtin" | grep -qx "$n"
}
decompress() { # SRC DST
  case "$1" in
    *.ko)     cp "$1" "$2" ;;
    *.ko.xz)  xz -dc "$1" > "$2" ;;
    *.ko.zst) zstd -qdc "$1" > "$2" ;;
    *.ko.gz)  gzip -dc "$1" > "$2" ;;
    *) die "unknown module format: $1" ;;
  esac
}
declare -A done_mod=()
order=()
add_mod() {
  local n="${1//-/_}" f deps d
  [ -n "${done_mod[$n]:-}" ] && return 0
  done_mod[$n]=1
  if is_builtin "$n"; then say "  $n: built in"; return 0; fi
  f=$(find_mod "$n")
  [ -n "$f" ] || die "module $n not found in $pkg"
  decompress "$f" "$stage/modules/$n.ko"
  objcopy -O binary --only-section=.modinfo "$stage/modules/$n.ko" "$work/modinfo"
  deps=$(tr '\0' '\n' < "$work/modinfo" | sed -n 's/^depends=//p' | tr ',' ' ')
  for d in $deps; do add_mod "$d"; done
  order+=("$n")
  local how=""; case "$f" in *.ko) ;; *) how=" [decompressed from .ko${f##*.ko}]" ;; esac
  say "  $n${deps:+ (needs: $deps)}$how"
}
say "modules for $uname_r:"
for m in "${WANT_MODS[@]}"; do add_mod "$m"; done
printf '%s\n' "${order[@]}" > "$stage/modules/load.list"
echo "$pkg $ver $uname_r" > "$stage/release"

# ---- publish atomically-ish ----
rm -rf "$OUT/vmlinuz" "$OUT/config" "$OUT/modules" "$OUT/release"
mv "$stage/vmlinuz" "$stage/modules" "$OUT/"
[ -e "$stage/config" ] && mv "$stage/config" "$OUT/"
mv "$stage/release" "$OUT/release"
say "ready: $OUT ($pkg $ver, $uname_r, ${#order[@]} modules)"

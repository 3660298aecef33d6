#!/usr/bin/env bash
# tests/vm/run-vm.sh — boot the test VM once and report its verdict.
#
#   run-vm.sh [--kernel F] [--initrd F] [--break] [--only NAME] [--verbose]
#             [--strict] [--timeout SECONDS] [--log FILE] [--disk-size MIB]
#             [--append ARGS]
#
#   --break    the deliberately broken run: the guest's checks expect a wrong
#              count (GPUIO_VM_BREAK=1), so the verdict must be FAIL
#   --only N   run only the guest checks whose name contains N
#   --verbose  guest programs print debug logs (libbpf's, GPUIO_VM_VERBOSE=1)
#   --strict   known gpuio bugs (GPUIO_KNOWN_BUGS in guest-tests.sh) fail too
#   --log F    keep the serial console log in F
#
# Boots the stock Debian kernel under QEMU/TCG with the initramfs from
# tests/vm/mkinitramfs.sh and a fresh raw disk image (ext4, made here with
# mkfs.ext4) as virtio /dev/vda.  QEMU exits 0 whatever happens in the guest,
# so the verdict is the "GPUIO-VM-RESULT:" line on the serial console.
# Exit 0 only on PASS; on anything else print the log's tail and exit 1.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
kernel=$src/build/vm/kernel/vmlinuz
initrd=$src/build/vm/initramfs.cpio
timeout=${GPUIO_VM_TIMEOUT:-300}
disk_mib=64
log='' brk=0 only='' verbose=0 strict=0 extra=''

while [ $# -gt 0 ]; do
  case "$1" in
    --kernel)    kernel=$2; shift ;;
    --initrd)    initrd=$2; shift ;;
    --timeout)   timeout=$2; shift ;;
    --log)       log=$2; shift ;;
    --disk-size) disk_mib=$2; shift ;;
    --append)    extra="$extra $2"; shift ;;
    --break)     brk=1 ;;
    --only)      only=$2; shift ;;
    --verbose|-v) verbose=1 ;;
    --strict)    strict=1 ;;
    -h|--help)   sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "run-vm: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

qemu=${QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null || { echo "run-vm: $qemu not found (apt-get install qemu-system-x86)" >&2; exit 3; }
for f in "$kernel" "$initrd"; do
  [ -r "$f" ] || { echo "run-vm: missing $f (make vm-build)" >&2; exit 3; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuio-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
[ -n "$log" ] || log=$work/serial.log
: > "$log"

# A fresh ext4 disk every boot: tests start from a known, empty filesystem.
disk=$work/disk.img
truncate -s "${disk_mib}M" "$disk"
mkfs.ext4 -q -F -L gpuio-vm -E lazy_itable_init=0,lazy_journal_init=0 "$disk" ||
  { echo "run-vm: mkfs.ext4 failed" >&2; exit 3; }

append="console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init mitigations=off"
[ "$brk" = 1 ] && append="$append gpuio.break=1"
[ -n "$only" ] && append="$append gpuio.only=$only"
[ "$verbose" = 1 ] && append="$append gpuio.verbose=1"
[ "$strict" = 1 ] && append="$append gpuio.strict=1"
append="$append$extra"

echo "run-vm: booting $(basename "$kernel") ($(cut -d' ' -f1-2 "$(dirname "$kernel")/release" 2>/dev/null || echo '?')), append: $append" >&2
t0=$(date +%s.%N)
rc=0
timeout -k 5 "$timeout" "$qemu" \
  -accel tcg -cpu max -m 1G -smp 1 \
  -nographic -no-reboot -monitor none -serial "file:$log" -nic none \
  -kernel "$kernel" -initrd "$initrd" -append "$append" \
  -drive "file=$disk,format=raw,if=virtio,cache=unsafe" ${GPUIO_VM_QEMU_ARGS:-} \
  </dev/null >"$work/qemu.out" 2>&1 || rc=$?
t1=$(date +%s.%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')

# Drop CRs and the BIOS's terminal escapes; end with a newline.
tr -d '\r' < "$log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g' > "$work/clean.log"
[ -z "$(tail -c1 "$work/clean.log")" ] || echo >> "$work/clean.log"
# The guest's output: from its first GPUIO-VM-CHECK line (SeaBIOS's escape
# codes may share that line) to the end, without kernel printk lines.
# "GPUIO-VM-CHECK:" lines are shown indented, the checks' own output with "|".
sed -n 's/.*\(GPUIO-VM-CHECK: \)/\1/; /^GPUIO-VM-CHECK: /,$p' "$work/clean.log" |
  grep -av -e '^\[ *[0-9]*\.[0-9]*\] ' -e '^GPUIO-VM-RESULT: ' |
  sed 's/^GPUIO-VM-CHECK: /  /; t; s/^/  | /' >&2 || true
verdict=$(grep -a '^GPUIO-VM-RESULT: ' "$work/clean.log" | tail -n1 | sed 's/^GPUIO-VM-RESULT: //' || true)

if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  running=$(grep -a '^GPUIO-VM-CHECK: RUN ' "$work/clean.log" | tail -n1 | sed 's/.*RUN //' || true)
  verdict="${verdict:-FAIL timed out after ${timeout}s${running:+ (last check started: $running)}}"
elif [ "$rc" != 0 ]; then
  verdict="${verdict:-FAIL qemu exited $rc: $(tail -n3 "$work/qemu.out" | tr '\n' ' ')}"
fi
verdict="${verdict:-FAIL no GPUIO-VM-RESULT line on the serial console}"

echo "run-vm: wall time ${wall}s" >&2
echo "GPUIO-VM-RESULT: $verdict"
[ "$verdict" = PASS ] && exit 0
if grep -aq 'GPUIO-VM-CHECK: ' "$work/clean.log"; then
  if grep -aq '^\[ *[0-9]*\.[0-9]*\] ' "$work/clean.log"; then
    echo "run-vm: --- kernel messages (last 30) ---" >&2
    grep -a '^\[ *[0-9]*\.[0-9]*\] ' "$work/clean.log" | tail -n 30 | sed 's/^/  > /' >&2
  fi
else   # init never spoke: show whatever the console got (panic, BIOS, ...)
  echo "run-vm: --- last 40 lines of the serial console ---" >&2
  tail -n 40 "$work/clean.log" | sed 's/^/  > /' >&2
fi
[ -s "$work/qemu.out" ] && { echo "run-vm: --- qemu ---" >&2; tail -n 10 "$work/qemu.out" | sed 's/^/  | /' >&2; }
exit 1

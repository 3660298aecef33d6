#!/usr/bin/env bash
# t_vm_modes — the attach modes this host cannot load (fentry/fexit, kprobes),
# proven on Debian's stock 6.1 kernel booted under QEMU/TCG (tests/vm/).
#
# 1. `make vm-build`: pinned kernel + modules, static probe program, initramfs.
# 2. One boot running tests/vm/guest-tests.sh: must say GPUIO-VM-RESULT: PASS.
# 3. The same boot with --break (checks expect a wrong count): must FAIL, so a
#    PASS above cannot come from a harness that never looks at the counts.
# Set VM_GPUIO=1 to include build/gpuio-static in the guest.
# Skips (77) only when QEMU cannot run here at all.
. "$(dirname "$0")/lib.sh"
cd "$GPUIO_SRC" || exit 1
t0=$(date +%s)

qemu=${QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null || skip "$qemu not installed (scripts/install-deps.sh all installs qemu-system-x86)"
"$qemu" -accel help 2>/dev/null | grep -qx tcg || skip "$qemu has no TCG accelerator"

make --no-print-directory vm-build ${VM_GPUIO:+VM_GPUIO=$VM_GPUIO} || fail "make vm-build failed"

echo "== boot 1: guest checks (expect PASS)"
rc=0; tests/vm/run-vm.sh >"$TMP/pass.out" 2>&1 || rc=$?
cat "$TMP/pass.out"
[ $rc -eq 0 ] || fail "VM run did not pass (exit $rc)"
grep -qx 'GPUIO-VM-RESULT: PASS' "$TMP/pass.out" || fail "exit 0 without a PASS verdict"
grep -q 'PASS probe_modes' "$TMP/pass.out" || fail "probe_modes did not run"

echo "== boot 2: deliberately broken (--break, expect FAIL)"
rc=0; tests/vm/run-vm.sh --break --only probe_modes >"$TMP/break.out" 2>&1 || rc=$?
grep -E 'MISMATCH|GPUIO-VM-RESULT' "$TMP/break.out" || true
[ $rc -ne 0 ] || { cat "$TMP/break.out"; fail "the broken run passed: the harness does not catch wrong counts"; }
grep -q '^GPUIO-VM-RESULT: FAIL checks failed: probe_modes' "$TMP/break.out" ||
  { cat "$TMP/break.out"; fail "the broken run failed for another reason than the count"; }
grep -q 'fentry/vfs_read calls .* MISMATCH' "$TMP/break.out" ||
  { cat "$TMP/break.out"; fail "the broken run did not report the fentry count mismatch"; }

echo "t_vm_modes: ok ($(( $(date +%s) - t0 ))s)"

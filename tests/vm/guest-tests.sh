# tests/vm/guest-tests.sh — the checks run inside the VM guest, one `check`
# line each.  Sourced by /init (busybox ash) after setup; see tests/vm/README.md.
#
#   check NAME CMD [ARGS...]   PASS on exit 0, SKIP on 77, FAIL otherwise;
#                              runs in a subshell with cwd /mnt/vda (ext4 on
#                              the virtio disk, fresh every boot)
#   skip REASON / fail REASON  end the current check (inside a shell function)
#   need_bin NAME...           SKIP the check unless NAME is in the guest's /bin
#
# Environment: GPUIO_VM_BREAK (1 = deliberately broken run: checks should
# expect a wrong value), GPUIO_VM_VERBOSE, PATH=/bin.  Binaries available:
# busybox applets, probe_modes, gpuio (only when built with VM_GPUIO=1), and
# tests/progs workloads listed in VM_PROGS.  Keep workloads small: TCG runs
# 10-50x slower than the host.

check_btf() {
  [ -r /sys/kernel/btf/vmlinux ] || fail "no /sys/kernel/btf/vmlinux"
  [ -d /sys/kernel/tracing/events/syscalls ] || fail "tracefs has no syscalls events"
  echo "BTF $(wc -c < /sys/kernel/btf/vmlinux) bytes; tracefs ok"
}

check btf-tracefs  check_btf
# fentry/fexit, kprobe/kretprobe, tp_btf, raw_tp, tracepoint: exact counts
# (probe_modes itself honours GPUIO_VM_BREAK).
check probe_modes  probe_modes /mnt/vda

# gpuio itself in each VFS attach mode (needs VM_GPUIO=1; SKIPs without it).
gpuio_runs() {
  need_bin gpuio
  gpuio --version
}
check gpuio-version gpuio_runs
# Next (phase 2), one line per mode, e.g.:
# check gpuio-vfs-fentry    gpuio_vfs_mode fentry
# check gpuio-vfs-kprobe    gpuio_vfs_mode kprobe
# check gpuio-vfs-syscall   gpuio_vfs_mode syscall

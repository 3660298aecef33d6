# tests/vm/vm.mk — `make vmtest`: boot Debian's stock 6.1 kernel under QEMU
# (TCG) with a busybox initramfs and run tests/vm/guest-tests.sh inside it.
# Included by the top Makefile.  See tests/vm/README.md.
#
#   make vmtest                      build everything, boot once, PASS/FAIL
#   make vmtest VM_ARGS=--break      the deliberately broken run (must FAIL)
#   make vmtest VM_ARGS='--only probe_modes'
#   make vmtest VM_BREAK_BPF=1       boot the broken-fentry gpuio (see below)
#   make vmbench                     per-call cost of each VFS mode vs an
#                                    empty program on the same hook (ratios)
#   make vm-build                    kernel + initramfs only
#   make vm-build-broken             the initramfs with the broken-fentry gpuio
#   make build/gpuio-static          build/gpuio's objects, linked -static
#
# build/gpuio-static is in the guest as /bin/gpuio by default; VM_GPUIO=0
# leaves it out (the guest checks that need it then say SKIP).
#
# The deliberately broken tracer: build/vm/broken/gpuio-static is gpuio built
# by a sub-make with BUILD=build/vm/broken BPF_EXTRA=-DGPUIO_BREAK_FENTRY
# (bpf/trace/vfs_func.bpf.h then adds 1 to every fexit/vfs_read return value), packed
# into build/vm/initramfs-broken.cpio.  tests/t_vm_modes.sh boots it and
# requires the fentry checks -- and only they -- to fail on the byte count.

VM_DIR      := $(BUILD)/vm
VM_KDIR     := $(VM_DIR)/kernel
VM_KSTAMP   := $(VM_KDIR)/release
VM_INITRD   := $(VM_DIR)/initramfs.cpio
VM_INITRD_BROKEN := $(VM_DIR)/initramfs-broken.cpio
VM_INITRD_BENCH  := $(VM_DIR)/initramfs-bench.cpio
VM_BROKEN   := $(VM_DIR)/broken
VM_GPUIO    ?= 1
VM_BREAK_BPF ?= 0
VM_ARGS     ?=
# Workloads from tests/progs/ to build statically into the guest's /bin.
VM_PROGS    ?= known_io uring_rw aio_rw sc_all preadloop sock_pingpong mmap_touch
VM_CFLAGS   := -O2 -g -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE
VM_STATIC_LIBS := -lbpf -lelf -lz

VM_TOOLS    := $(VM_DIR)/probe_modes $(VM_DIR)/capture_totals $(VM_DIR)/bench_hooks \
               $(addprefix $(VM_DIR)/bin/,$(VM_PROGS))
VM_BINS     := $(VM_TOOLS)
ifeq ($(VM_GPUIO),1)
VM_BINS     += $(BUILD)/gpuio-static
endif
VM_INITRD_SEL := $(if $(filter 1,$(VM_BREAK_BPF)),$(VM_INITRD_BROKEN),$(VM_INITRD))

.PHONY: vmtest vm-build vm-build-broken vm-kernel vmbench
vmtest:
	@scripts/install-deps.sh all
	@$(MAKE) --no-print-directory $(VM_INITRD_SEL)
	@tests/vm/run-vm.sh --kernel $(VM_KDIR)/vmlinuz --initrd $(VM_INITRD_SEL) $(VM_ARGS)

vm-build: $(VM_INITRD)
vm-build-broken: $(VM_INITRD_BROKEN)
vm-kernel: $(VM_KSTAMP)

# In-guest benchmark (ratios only: TCG timings say nothing about real hardware).
vmbench:
	@scripts/install-deps.sh all
	@$(MAKE) --no-print-directory $(VM_INITRD_BENCH)
	@tests/vm/bench-modes.sh --initrd $(VM_INITRD_BENCH)

# Pinned kernel + modules; the script is a no-op when its pin is cached.
$(VM_KSTAMP): scripts/vm-kernel.sh
	@scripts/vm-kernel.sh $(VM_KDIR)

$(VM_INITRD): tests/vm/mkinitramfs.sh tests/vm/init tests/vm/guest-tests.sh $(VM_KSTAMP) $(VM_BINS)
	@tests/vm/mkinitramfs.sh $@ $(VM_KDIR)/modules $(VM_BINS)

$(VM_INITRD_BROKEN): tests/vm/mkinitramfs.sh tests/vm/init tests/vm/guest-tests.sh $(VM_KSTAMP) $(VM_TOOLS) $(VM_BROKEN)/gpuio-static
	@tests/vm/mkinitramfs.sh $@ $(VM_KDIR)/modules $(VM_TOOLS) $(VM_BROKEN)/gpuio-static

$(VM_INITRD_BENCH): tests/vm/mkinitramfs.sh tests/vm/init tests/vm/bench-guest.sh $(VM_KSTAMP) $(VM_TOOLS) $(BUILD)/gpuio-static
	@GPUIO_VM_GUEST_TESTS=tests/vm/bench-guest.sh tests/vm/mkinitramfs.sh $@ $(VM_KDIR)/modules $(VM_TOOLS) $(BUILD)/gpuio-static

# The tracer itself, statically linked for the guest (no libbpf/libelf there).
# Without the monitor daemon (its libmicrohttpd pulls GnuTLS into a static link).
STATIC_OBJS := $(filter-out $(BUILD)/user/cmd/cmd_monitor.o $(BUILD)/user/monitor/%.o,$(USER_OBJS)) \
               $(BUILD)/user/cupti_locate.o
$(BUILD)/gpuio-static: $(STATIC_OBJS) tests/vm/no_monitor.c
	$(CC) $(CFLAGS) -static $(STATIC_OBJS) tests/vm/no_monitor.c -o $@ $(filter-out -lmicrohttpd,$(LDLIBS))

# The same tracer with the deliberately wrong fexit/vfs_read (a sub-make with
# its own BUILD dir, so the real build/ objects are never touched).  FORCE:
# the sub-make decides what is stale.
$(VM_BROKEN)/gpuio-static: FORCE
	@$(MAKE) --no-print-directory BUILD=$(VM_BROKEN) BPF_EXTRA=-DGPUIO_BREAK_FENTRY VM_GPUIO=0 $@
.PHONY: FORCE
FORCE:

# Guest-side capture summarizer (tests/vm/capture_totals.c + the capture reader).
$(VM_DIR)/capture_totals: tests/vm/capture_totals.c user/capture/capture.c user/capture/cap_layers.c user/capture/cap_layers.h user/capture/compact.c user/capture/compact.h user/lib/file_io.c user/capture/capture.h bpf/gpuio_abi.h | $(BUILD)/.deps-build
	@mkdir -p $(VM_DIR)
	$(CC) $(VM_CFLAGS) -static -Iuser -I. tests/vm/capture_totals.c user/capture/capture.c user/capture/cap_layers.c user/capture/compact.c user/lib/file_io.c -o $@

# The harness's own libbpf program (kept out of bpf/, which the top Makefile
# compiles wholesale).  CO-RE relocates it against the guest's BTF.
$(VM_DIR)/probe_modes.bpf.o: tests/vm/probe_modes.bpf.c tests/vm/probe_modes.h $(BUILD)/vmlinux.h
	@mkdir -p $(VM_DIR)
	$(CLANG) -target bpf -O2 -g -D__TARGET_ARCH_x86 -I$(BUILD) -Itests/vm -Wall -c $< -o $@

$(VM_DIR)/probe_modes.skel.h: $(VM_DIR)/probe_modes.bpf.o
	$(BPFTOOL) gen skeleton $< name probe_modes_bpf > $@.tmp && mv $@.tmp $@

$(VM_DIR)/probe_modes: tests/vm/probe_modes.c tests/vm/probe_modes.h $(VM_DIR)/probe_modes.skel.h | $(BUILD)/.deps-build
	$(CC) $(VM_CFLAGS) -static -I$(VM_DIR) -Itests/vm $< -o $@ $(VM_STATIC_LIBS)

# Empty programs on each VFS hook (TGID lookup only): the floor for vmbench.
$(VM_DIR)/bench_hooks.bpf.o: tests/vm/bench_hooks.bpf.c $(BUILD)/vmlinux.h
	@mkdir -p $(VM_DIR)
	$(CLANG) -target bpf -O2 -g -D__TARGET_ARCH_x86 -I$(BUILD) -Itests/vm -Wall -c $< -o $@

$(VM_DIR)/bench_hooks.skel.h: $(VM_DIR)/bench_hooks.bpf.o
	$(BPFTOOL) gen skeleton $< name bench_hooks_bpf > $@.tmp && mv $@.tmp $@

$(VM_DIR)/bench_hooks: tests/vm/bench_hooks.c $(VM_DIR)/bench_hooks.skel.h | $(BUILD)/.deps-build
	$(CC) $(VM_CFLAGS) -static -I$(VM_DIR) -Itests/vm $< -o $@ $(VM_STATIC_LIBS)

$(VM_DIR)/bin/%: tests/progs/%.c
	@mkdir -p $(VM_DIR)/bin
	$(CC) -O2 -g -Wall -D_GNU_SOURCE -static -o $@ $< -lpthread $(LDLIBS_$*)

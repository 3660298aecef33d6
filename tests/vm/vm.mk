# tests/vm/vm.mk — `make vmtest`: boot Debian's stock 6.1 kernel under QEMU
# (TCG) with a busybox initramfs and run tests/vm/guest-tests.sh inside it.
# Included by the top Makefile.  See tests/vm/README.md.
#
#   make vmtest                      build everything, boot once, PASS/FAIL
#   make vmtest VM_ARGS=--break      the deliberately broken run (must FAIL)
#   make vmtest VM_ARGS='--only probe_modes'
#   make vm-build                    kernel + initramfs only
#   make build/gpuio-static          build/gpuio's objects, linked -static
#
# Set VM_GPUIO=1 to put build/gpuio-static into the guest as /bin/gpuio
# (the guest checks that need it say SKIP when it is absent).

VM_DIR      := $(BUILD)/vm
VM_KDIR     := $(VM_DIR)/kernel
VM_KSTAMP   := $(VM_KDIR)/release
VM_INITRD   := $(VM_DIR)/initramfs.cpio
VM_GPUIO    ?= 0
VM_ARGS     ?=
# Workloads from tests/progs/ to build statically into the guest's /bin.
VM_PROGS    ?=
VM_CFLAGS   := -O2 -g -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE
VM_STATIC_LIBS := -lbpf -lelf -lz

VM_BINS     := $(VM_DIR)/probe_modes $(addprefix $(VM_DIR)/bin/,$(VM_PROGS))
ifeq ($(VM_GPUIO),1)
VM_BINS     += $(BUILD)/gpuio-static
endif

.PHONY: vmtest vm-build vm-kernel
vmtest:
	@scripts/install-deps.sh all
	@$(MAKE) --no-print-directory vm-build
	@tests/vm/run-vm.sh --kernel $(VM_KDIR)/vmlinuz --initrd $(VM_INITRD) $(VM_ARGS)

vm-build: $(VM_INITRD)
vm-kernel: $(VM_KSTAMP)

# Pinned kernel + modules; the script is a no-op when its pin is cached.
$(VM_KSTAMP): scripts/vm-kernel.sh
	@scripts/vm-kernel.sh $(VM_KDIR)

$(VM_INITRD): tests/vm/mkinitramfs.sh tests/vm/init tests/vm/guest-tests.sh $(VM_KSTAMP) $(VM_BINS)
	@tests/vm/mkinitramfs.sh $@ $(VM_KDIR)/modules $(VM_BINS)

# The tracer itself, statically linked for the guest (no libbpf/libelf there).
$(BUILD)/gpuio-static: $(USER_OBJS)
	$(CC) $(CFLAGS) -static $^ -o $@ $(LDLIBS)

# The harness's own libbpf program (kept out of bpf/, which the top Makefile
# compiles wholesale).  CO-RE relocates it against the guest's BTF.
$(VM_DIR)/probe_modes.bpf.o: tests/vm/probe_modes.bpf.c tests/vm/probe_modes.h $(BUILD)/vmlinux.h
	@mkdir -p $(VM_DIR)
	$(CLANG) -target bpf -O2 -g -D__TARGET_ARCH_x86 -I$(BUILD) -Itests/vm -Wall -c $< -o $@

$(VM_DIR)/probe_modes.skel.h: $(VM_DIR)/probe_modes.bpf.o
	$(BPFTOOL) gen skeleton $< name probe_modes_bpf > $@.tmp && mv $@.tmp $@

$(VM_DIR)/probe_modes: tests/vm/probe_modes.c tests/vm/probe_modes.h $(VM_DIR)/probe_modes.skel.h | $(BUILD)/.deps-build
	$(CC) $(VM_CFLAGS) -static -I$(VM_DIR) -Itests/vm $< -o $@ $(VM_STATIC_LIBS)

$(VM_DIR)/bin/%: tests/progs/%.c
	@mkdir -p $(VM_DIR)/bin
	$(CC) -O2 -g -Wall -D_GNU_SOURCE -static -o $@ $< -lpthread $(LDLIBS_$*)

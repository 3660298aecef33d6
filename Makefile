# gpuio — top-level build.  `make` builds build/gpuio; `make check` runs every
# test (as root); `make demo` traces the bundled workload; `make bench` measures.
PREFIX     ?= /usr/local
SYSTEMD_UNIT_DIR ?= /etc/systemd/system
DESTDIR    ?=
BUILD      := build
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
ARCH       := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

CFLAGS     ?= -O2 -g
CFLAGS     += -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation -std=gnu11 -D_GNU_SOURCE \
              -I$(BUILD) -Iuser -I.
LDLIBS     += -lbpf -lelf -lz
LDLIBS     += -lmicrohttpd -lpthread -lm
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD) -Ibpf \
              -Wall -Wno-unused-function $(BPF_EXTRA)

# bpf/<layer>/NAME.bpf.c -> build/NAME.bpf.o -> build/NAME.skel.h (names are unique)
BPF_SRCS   := $(wildcard bpf/*/*.bpf.c)
BPF_HDRS   := $(wildcard bpf/*.h bpf/*/*.h)
BPF_OBJS   := $(patsubst %.bpf.c,$(BUILD)/%.bpf.o,$(notdir $(BPF_SRCS)))
SKELS      := $(patsubst %.bpf.c,$(BUILD)/%.skel.h,$(notdir $(BPF_SRCS)))
vpath %.bpf.c $(sort $(dir $(BPF_SRCS)))

# user/: the commands (user/main.c, user/cmd/) over libgpuio.a (everything else:
# lib, trace, capture, model, export, report, monitor, gpu), which the tests,
# the unit tests and the fuzzers link too.
USER_SRCS  := $(wildcard user/*.c user/*/*.c)
USER_OBJS  := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
CMD_SRCS   := user/main.c $(wildcard user/cmd/*.c)
CMD_OBJS   := $(patsubst user/%.c,$(BUILD)/user/%.o,$(CMD_SRCS))
LIB_SRCS   := $(filter-out $(CMD_SRCS),$(USER_SRCS))
LIB_OBJS   := $(patsubst user/%.c,$(BUILD)/user/%.o,$(LIB_SRCS))
# which libcupti to use: the CUPTI collector and `gpuio doctor` share cupti/cupti_locate.c
LIB_OBJS   += $(BUILD)/user/cupti_locate.o
LIBGPUIO   := $(BUILD)/libgpuio.a
USER_HDRS  := $(wildcard user/*/*.h) $(BPF_HDRS)

.SECONDARY:
.PHONY: all deps install uninstall check test bench demo vmtest clean fuzz man gpu-check deb
all: $(BUILD)/gpuio

# Dependencies come from Debian; the script is a no-op when all are present.
deps:
	@scripts/install-deps.sh build

$(BUILD)/.deps-build:
	@scripts/install-deps.sh build
	@mkdir -p $(BUILD) && touch $@

# vmlinux.h: from the running kernel's BTF when it has one, else the committed copy.
$(BUILD)/vmlinux.h: | $(BUILD)/.deps-build
	@mkdir -p $(BUILD)
	@if [ -r /sys/kernel/btf/vmlinux ]; then \
		$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@; \
	else \
		echo "gpuio: no /sys/kernel/btf/vmlinux; using vmlinux/vmlinux.h"; cp vmlinux/vmlinux.h $@; \
	fi

$(BUILD)/%.bpf.o: %.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/user/%.o: user/%.c $(USER_HDRS) $(SKELS) | $(BUILD)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/user/cupti_locate.o: cupti/cupti_locate.c cupti/cupti_locate.h | $(BUILD)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIBGPUIO): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/gpuio: $(CMD_OBJS) $(LIBGPUIO)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# Man pages: from each command's --help (scripts/man/mkman.sh, help2man).
# one page per scripts/man/gpuio*.h2m (scripts/man/mkman.sh makes the same list)
MAN_PAGES := $(basename $(notdir $(wildcard scripts/man/gpuio*.h2m)))
$(BUILD)/man/.stamp: $(BUILD)/gpuio scripts/man/mkman.sh $(wildcard scripts/man/*.h2m)
	@scripts/man/mkman.sh $(BUILD)/gpuio $(BUILD)/man
	@touch $@
man: $(BUILD)/man/.stamp

# `make uninstall` removes exactly what `make install` puts in place: binary,
# CUPTI collector and its lib/gpuio directory (cupti/cupti.mk), systemd unit
# (not enabled), man pages, the PerfettoSQL views share/gpuio/gpuio.sql
# (docs/sql.md) and their directory. Standard directories (bin, man1...) stay.
install: $(BUILD)/gpuio $(BUILD)/man/.stamp
	install -D -m 0755 $(BUILD)/gpuio $(DESTDIR)$(PREFIX)/bin/gpuio
	install -d $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	sed 's|@BINDIR@|$(PREFIX)/bin|' scripts/gpuio-monitor.service > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/gpuio-monitor.service
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 $(patsubst %,$(BUILD)/man/%.1,$(MAN_PAGES)) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -D -m 0644 user/export/sql/gpuio.sql $(DESTDIR)$(PREFIX)/share/gpuio/gpuio.sql

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/gpuio
	rm -f $(DESTDIR)$(SYSTEMD_UNIT_DIR)/gpuio-monitor.service
	rm -f $(patsubst %,$(DESTDIR)$(PREFIX)/share/man/man1/%.1,$(MAN_PAGES))
	rm -f $(DESTDIR)$(PREFIX)/share/gpuio/gpuio.sql
	-rmdir $(DESTDIR)$(PREFIX)/share/gpuio 2>/dev/null

# The one test command (README, .ci/run): installs what is missing, builds, runs all.
check test:
	@scripts/install-deps.sh all
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory test-progs
	@tests/run-all.sh

demo:
	@scripts/install-deps.sh test
	@$(MAKE) -s --no-print-directory all $(BUILD)/tests/demo_loader
	@scripts/demo.sh

bench:
	@scripts/install-deps.sh all
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory test-progs bench-progs
	@tests/bench/run.sh
	@tests/bench/prog_cost.sh | tee $(BUILD)/bench/prog_cost.md
	@tests/bench/collector.sh | tee $(BUILD)/bench/collector.md
	@tests/bench/loader.sh | tee $(BUILD)/bench/loader.md
	@tests/bench/start.sh | tee $(BUILD)/bench/start.md
	@tests/bench/node_load.sh | tee $(BUILD)/bench/node_load.md
	@tests/bench/monitor_run.sh
	@tests/bench/monitor_sched.sh | tee $(BUILD)/bench/monitor_sched.md
	@tests/bench/sched.sh | tee $(BUILD)/bench/sched.md
	@tests/bench/sockets.sh | tee $(BUILD)/bench/sockets.md
	@tests/bench/bystander.sh | tee $(BUILD)/bench/bystander.md
	@tests/bench/faults.sh | tee $(BUILD)/bench/faults.md
	@tests/bench/stacks.sh | tee $(BUILD)/bench/stacks.md
	@tests/bench/cupti.sh | tee $(BUILD)/bench/cupti.md
	@tests/bench/cuda_uprobes.sh | tee $(BUILD)/bench/cuda_uprobes.md
	@tests/bench/report.sh
	@tests/bench/scale.sh
	@$(MAKE) --no-print-directory vmbench

# A Debian package (debhelper): build/deb/gpuio_VERSION_ARCH.deb (scripts/deb/).
deb:
	@scripts/install-deps.sh all
	@scripts/deb/build-deb.sh $(BUILD)/deb

# On a machine with an NVIDIA GPU (tests/gpu/README.md); not part of `make check`.
gpu-check: $(BUILD)/gpuio cupti
	@tests/gpu/gpu_check.sh

clean:
	rm -rf $(BUILD)

# Test programs (workloads with known I/O): tests/progs/NAME.c -> build/tests/NAME
TEST_PROGS := $(patsubst tests/progs/%.c,$(BUILD)/tests/%,$(wildcard tests/progs/*.c))
$(BUILD)/tests/%: tests/progs/%.c
	@mkdir -p $(BUILD)/tests
	$(CC) -O2 -g -Wall -D_GNU_SOURCE -o $@ $< -lpthread $(LDLIBS_$*)
LDLIBS_uring_rw := -luring
LDLIBS_uring_sock := -luring
test-progs: $(TEST_PROGS)
.PHONY: test-progs

# Each area keeps its own rules beside its files.
-include tests/tests.mk
-include tests/unit/unit.mk
-include tests/bench/bench.mk
-include tests/vm/vm.mk
-include cupti/cupti.mk
-include tests/gpu/bundle/bundle.mk

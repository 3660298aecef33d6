# tests/tests.mk — test-only programs, included by the top-level Makefile:
#   build/tests/gen_capture    synthetic captures with known content (tests/gen_capture.c)
#   build/tests/fuzz_capture   libFuzzer target over reader + exporter + info
# `make fuzz` runs the fuzzer for FUZZ_SECONDS (default 600) instead of the
# ~30 s of `make check`.

GEN_CAPTURE_SRCS := tests/gen_capture.c user/capture/capture.c user/capture/header.c user/lib/file_io.c user/lib/clock.c
$(BUILD)/tests/gen_capture: $(GEN_CAPTURE_SRCS) user/capture/capture.h bpf/gpuio_abi.h
	@mkdir -p $(BUILD)/tests
	$(CC) $(CFLAGS) -Wno-override-init -o $@ $(GEN_CAPTURE_SRCS)

# The fuzzer links the reader, model, exporters and report from a copy of
# libgpuio.a built with its instrumentation (the archive pulls in only what
# the target reaches), plus the two commands it drives.
FUZZ_LIB_SRCS := $(wildcard user/lib/*.c user/capture/*.c user/model/*.c user/export/*.c \
                            user/report/*.c)
FUZZ_LIB_OBJS := $(patsubst user/%.c,$(BUILD)/fuzz/%.o,$(FUZZ_LIB_SRCS))
FUZZ_SRCS   := tests/fuzz/fuzz_capture.c user/cmd/cmd_info.c user/cmd/cmd_report.c
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -I$(BUILD) -Ibpf -Iuser \
               -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_HAVE   = [ -f "$$($(CLANG) -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-$$(uname -m).a" ]
$(BUILD)/fuzz/%.o: user/%.c $(USER_HDRS)
	@mkdir -p $(dir $@)
	@if $(FUZZ_HAVE); then echo "$(CLANG) -c $<  (fuzz)"; \
		$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@; else touch $@; fi
$(BUILD)/fuzz/libgpuio.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	@$(AR) rcs $@ $^
# libFuzzer ships in libclang-rt-14-dev (scripts/install-deps.sh test): without
# it the fuzzer is not built and t_fuzz_capture skips, saying why.
$(BUILD)/tests/fuzz_capture: $(FUZZ_SRCS) $(USER_HDRS) $(BUILD)/fuzz/libgpuio.a
	@mkdir -p $(BUILD)/tests
	@if $(FUZZ_HAVE); then \
		echo "$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $(FUZZ_SRCS) $(BUILD)/fuzz/libgpuio.a -lz"; \
		$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $(FUZZ_SRCS) $(BUILD)/fuzz/libgpuio.a -lz; \
	else \
		echo "gpuio: libFuzzer not found (apt-get install libclang-rt-14-dev): $@ not built"; \
	fi

test-progs: $(BUILD)/tests/gen_capture $(BUILD)/tests/fuzz_capture

fuzz: $(BUILD)/tests/gen_capture $(BUILD)/tests/fuzz_capture
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-600} tests/run-all.sh tests/t_fuzz_capture.sh

# CUDA API uprobes (tests/t_cuda_uprobes.sh): cuda_calls links the real
# libcudart when the toolkit is there (else it is built to exit 77: skip);
# fake_libcuda is a stand-in libcuda.so.1 with known results.
CUDA_HOME ?= /usr/local/cuda
LDLIBS_cuda_calls := $(if $(wildcard $(CUDA_HOME)/lib64/libcudart.so.*),-L$(CUDA_HOME)/lib64 -lcudart -Xlinker -rpath -Xlinker $(CUDA_HOME)/lib64,-DNO_CUDART)
LDLIBS_fake_libcuda_calls := -ldl
$(BUILD)/tests/fake_libcuda: tests/progs/fake_libcuda.c
	@mkdir -p $(BUILD)/tests/fake_cuda
	$(CC) -O2 -g -Wall -shared -fPIC -Wl,-soname,libcuda.so.1 -o $(BUILD)/tests/fake_cuda/libcuda.so.1 $< -ldl
	ln -sfn fake_cuda/libcuda.so.1 $@
# tests/bench/cuda_uprobes.sh: a call into the stand-in libcuda.so.1 in a loop
bench-progs: $(BUILD)/bench/cuda_uprobe_bench
$(BUILD)/bench/cuda_uprobe_bench: tests/bench/cuda_uprobe_bench.c
	@mkdir -p $(BUILD)/bench
	$(CC) -O2 -g -Wall -o $@ $< -ldl

# The library t_inject.sh injects into running processes (tests/progs/lib/).
$(BUILD)/tests/libinject_test.so: tests/progs/lib/inject_testlib.c
	@mkdir -p $(BUILD)/tests
	$(CC) -O2 -g -Wall -fPIC -shared -o $@ $<
test-progs: $(BUILD)/tests/libinject_test.so

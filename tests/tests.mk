# tests/tests.mk — test-only programs, included by the top-level Makefile:
#   build/tests/gen_capture    synthetic captures with known content (tests/gen_capture.c)
#   build/tests/fuzz_reader    libFuzzer targets (tests/fuzz/): the capture reader and
#   build/tests/fuzz_export    record sanitizer; the model, both exporters and info;
#   build/tests/fuzz_report    the report (text, JSON, HTML). Seeds: tests/fuzz/corpus/.
# `make fuzz` runs each for FUZZ_SECONDS (default 600) instead of the short
# runs of `make check`.

GEN_CAPTURE_SRCS := tests/gen_capture.c user/capture/capture.c user/capture/cap_layers.c user/capture/compact.c user/capture/header.c user/lib/file_io.c user/lib/clock.c
$(BUILD)/tests/gen_capture: $(GEN_CAPTURE_SRCS) user/capture/capture.h bpf/gpuio_abi.h
	@mkdir -p $(BUILD)/tests
	$(CC) $(CFLAGS) -Wno-override-init -o $@ $(GEN_CAPTURE_SRCS)

# The fuzzers link the reader, model, exporters and report from a copy of
# libgpuio.a built with their instrumentation (the archive pulls in only what
# a target reaches), plus the two commands they drive.
FUZZ_LIB_SRCS := $(wildcard user/lib/*.c user/capture/*.c user/model/*.c user/timeline/*.c user/export/*.c \
                            user/report/*.c user/python/*.c)
FUZZ_LIB_OBJS := $(patsubst user/%.c,$(BUILD)/fuzz/%.o,$(FUZZ_LIB_SRCS)) \
                 $(BUILD)/fuzz/cmd/cmd_info.o $(BUILD)/fuzz/cmd/cmd_report.o $(BUILD)/fuzz/fuzz_common.o
FUZZ_TARGETS := reader export report
FUZZ_BINS   := $(patsubst %,$(BUILD)/tests/fuzz_%,$(FUZZ_TARGETS))
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -I$(BUILD) -Iuser -I. -Itests/fuzz \
               -fsanitize=address,undefined -fno-sanitize-recover=undefined
# libFuzzer ships in libclang-rt-14-dev (scripts/install-deps.sh test): without
# it the fuzzers are not built and t_fuzz skips, saying why.
FUZZ_HAVE   = [ -f "$$($(CLANG) -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-$$(uname -m).a" ]
$(BUILD)/fuzz/%.o: user/%.c $(USER_HDRS)
	@mkdir -p $(dir $@)
	@if $(FUZZ_HAVE); then echo "$(CLANG) -c $<  (fuzz)"; \
		$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@; else touch $@; fi
$(BUILD)/fuzz/fuzz_common.o: tests/fuzz/fuzz_common.c tests/fuzz/fuzz_common.h $(USER_HDRS)
	@mkdir -p $(dir $@)
	@if $(FUZZ_HAVE); then $(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@; \
		else touch $@; fi
$(BUILD)/fuzz/libgpuio.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	@$(AR) rcs $@ $^
$(BUILD)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(BUILD)/fuzz/libgpuio.a
	@mkdir -p $(BUILD)/tests
	@if $(FUZZ_HAVE); then \
		echo "$(CLANG) -fsanitize=fuzzer -o $@ $< (fuzz)"; \
		$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/fuzz/libgpuio.a -lz; \
	else \
		echo "gpuio: libFuzzer not found (apt-get install libclang-rt-14-dev): $@ not built"; \
	fi

test-progs: $(BUILD)/tests/gen_capture $(FUZZ_BINS)

fuzz: $(BUILD)/tests/gen_capture $(FUZZ_BINS)
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-600} tests/run-all.sh tests/t_fuzz.sh

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
# fake_nvml is a stand-in libnvidia-ml.so.1 (t_monitor_nvml.sh, t_doctor.sh).
$(BUILD)/tests/fake_nvml: tests/progs/fake_nvml.c
	@mkdir -p $(BUILD)/tests/fake_nvml.d
	$(CC) -O2 -g -Wall -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o $(BUILD)/tests/fake_nvml.d/libnvidia-ml.so.1 $<
	ln -sfn fake_nvml.d/libnvidia-ml.so.1 $@
# fake_libcupti is a stand-in libcupti.so.13 on which the collector turns ON (t_cupti_on.sh).
$(BUILD)/tests/fake_libcupti: tests/progs/fake_libcupti.c
	@mkdir -p $(BUILD)/tests/fake_cupti.d
	$(CC) -O2 -g -Wall -shared -fPIC -Wl,-soname,libcupti.so.13 -o $(BUILD)/tests/fake_cupti.d/libcupti.so.13 $<
	ln -sfn fake_cupti.d/libcupti.so.13 $@
# tests/bench/cuda_uprobes.sh: a call into the stand-in libcuda.so.1 in a loop
bench-progs: $(BUILD)/bench/cuda_uprobe_bench
$(BUILD)/bench/cuda_uprobe_bench: tests/bench/cuda_uprobe_bench.c
	@mkdir -p $(BUILD)/bench
	$(CC) -O2 -g -Wall -o $@ $< -ldl

# The line-table decoder against each interpreter's own lines (t_py_stacks.sh)
$(BUILD)/tests/py_lines_check: tests/progs/py_lines_check.c $(LIBGPUIO)
	@mkdir -p $(BUILD)/tests
	$(CC) $(CFLAGS) -o $@ $< $(LIBGPUIO) $(LDLIBS)

# The library t_inject.sh injects into running processes (tests/progs/lib/).
$(BUILD)/tests/libinject_test.so: tests/progs/lib/inject_testlib.c
	@mkdir -p $(BUILD)/tests
	$(CC) -O2 -g -Wall -fPIC -shared -o $@ $<
test-progs: $(BUILD)/tests/libinject_test.so

# tests/progs/torch_loader.py (PyTorch DataLoader workloads that measure
# themselves) is not built: tests run it from the source tree with
# /usr/bin/python3 (Debian's python3-torch) through tests/torch_lib.sh;
# t_torch_loader.sh checks its numbers, and skips without torch.
# native_lib: a library with frame pointers whose functions read at known
# depths (t_native_frames.sh), loaded by tests/progs/native_frames.py
$(BUILD)/tests/native_lib: tests/progs/native_lib.c
	@mkdir -p $(BUILD)/tests/native_lib.d
	$(CC) -O2 -g -Wall -shared -fPIC -fno-omit-frame-pointer -fno-optimize-sibling-calls \
		 -o $(BUILD)/tests/native_lib.d/libnative_frames.so $<
	ln -sfn native_lib.d/libnative_frames.so $@

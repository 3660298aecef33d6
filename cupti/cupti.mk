# cupti/cupti.mk — libgpuio-cupti.so, the in-process CUPTI collector (cupti/),
# its test programs and its benchmark. Included by the top-level Makefile.
#
#   $(BUILD)/libgpuio-cupti.so   part of `all` when CUDA's CUPTI headers are
#                                found (CUDA_HOME, default /usr/local/cuda)
#   $(BUILD)/tests/cupti_*       part of `test-progs` (tests/t_cupti_*.sh)
#   $(BUILD)/bench/cupti_bench   tests/bench/cupti.sh
#   install-cupti                $(DESTDIR)$(PREFIX)/lib/gpuio/libgpuio-cupti.so
#
# Nothing links libcupti: the collector dlopen()s it (libcupti.so.13, then
# the path found here), so the library loads where CUDA is absent.

CUDA_HOME  ?= /usr/local/cuda
CUPTI_HDR  := $(firstword $(wildcard $(CUDA_HOME)/include/cupti.h \
                                     $(CUDA_HOME)/extras/CUPTI/include/cupti.h))
CUPTI_SO   := $(firstword $(wildcard $(CUDA_HOME)/lib64/libcupti.so.13 \
                                     $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so.13 \
                                     $(CUDA_HOME)/lib/libcupti.so.13 \
                                     $(CUDA_HOME)/targets/$(shell uname -m)-linux/lib/libcupti.so.13))
CUPTI_LIB  := $(BUILD)/libgpuio-cupti.so

.PHONY: cupti install-cupti uninstall-cupti cupti-notice

ifneq ($(CUPTI_HDR),)

CUPTI_CFLAGS := $(CFLAGS) -fPIC -fvisibility=hidden -pthread \
                -iquote cupti -I$(CUDA_HOME)/include -I$(dir $(CUPTI_HDR)) \
                $(if $(CUPTI_SO),-DGPUIO_CUPTI_PATH='"$(realpath $(CUPTI_SO))"')
CUPTI_HDRS   := $(wildcard cupti/*.h) bpf/gpuio_abi.h user/capture/capture.h
# everything but the exported entry points: tests and tools link these
CUPTI_CORE   := cupti_api cupti_locate record_layout clock side_file convert bufpool collector log
# the capture header builder, the clock and whole writes, shared with the tracer
CUPTI_SHARED := user/capture/header.c user/lib/clock.c user/lib/file_io.c
CUPTI_OBJS   := $(patsubst %,$(BUILD)/cupti/%.o,$(CUPTI_CORE)) \
                $(patsubst user/%.c,$(BUILD)/cupti/user/%.o,$(CUPTI_SHARED))
CUPTI_TOBJS  := $(CUPTI_OBJS) $(BUILD)/cupti/fake_cupti.o
CUPTI_TESTS  := $(patsubst %,$(BUILD)/tests/%,cupti_synth cupti_unit cupti_abi cupti_inject cupti_nvtx)

all: $(CUPTI_LIB)
cupti: $(CUPTI_LIB)
test-progs: $(CUPTI_LIB) $(CUPTI_TESTS)
bench-progs: $(BUILD)/bench/cupti_bench
install: install-cupti

$(BUILD)/cupti/%.o: cupti/%.c $(CUPTI_HDRS)
	@mkdir -p $(BUILD)/cupti
	$(CC) $(CUPTI_CFLAGS) -c $< -o $@

$(BUILD)/cupti/user/%.o: user/%.c $(CUPTI_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CUPTI_CFLAGS) -c $< -o $@

$(BUILD)/cupti/fake_cupti.o: cupti/tests/fake_cupti.c cupti/tests/fake_cupti.h $(CUPTI_HDRS)
	@mkdir -p $(BUILD)/cupti
	$(CC) $(CUPTI_CFLAGS) -c $< -o $@

# -z nodelete: CUPTI keeps pointers to our callbacks for the process's life.
$(CUPTI_LIB): $(CUPTI_OBJS) $(BUILD)/cupti/entry.o
	$(CC) $(CUPTI_CFLAGS) -shared -Wl,-z,nodelete -Wl,-z,defs -o $@ $^ -ldl -lpthread

$(BUILD)/tests/cupti_%: cupti/tests/cupti_%.c $(CUPTI_TOBJS) cupti/tests/fake_cupti.h
	@mkdir -p $(BUILD)/tests
	$(CC) $(CUPTI_CFLAGS) -iquote cupti/tests -o $@ $< $(CUPTI_TOBJS) -ldl -lpthread

$(BUILD)/bench/cupti_bench: tests/bench/cupti_bench.c $(CUPTI_TOBJS) cupti/tests/fake_cupti.h
	@mkdir -p $(BUILD)/bench
	$(CC) $(CUPTI_CFLAGS) -iquote cupti/tests -o $@ $< $(CUPTI_TOBJS) -ldl -lpthread

install-cupti: $(CUPTI_LIB)
	install -D -m 0755 $(CUPTI_LIB) $(DESTDIR)$(PREFIX)/lib/gpuio/libgpuio-cupti.so

else  # no CUPTI headers

all: cupti-notice
cupti test-progs bench-progs install-cupti: cupti-notice
cupti-notice:
	@echo "gpuio: CUDA/CUPTI not found (CUDA_HOME=$(CUDA_HOME)): libgpuio-cupti.so not built"

endif

uninstall-cupti:
	rm -f $(DESTDIR)$(PREFIX)/lib/gpuio/libgpuio-cupti.so
	-rmdir $(DESTDIR)$(PREFIX)/lib/gpuio 2>/dev/null
uninstall: uninstall-cupti

# tests/tests.mk — test-only programs, included by the top-level Makefile:
#   build/tests/gen_capture    synthetic captures with known content (tests/gen_capture.c)
#   build/tests/fuzz_capture   libFuzzer target over reader + exporter + info
# `make fuzz` runs the fuzzer for FUZZ_SECONDS (default 600) instead of the
# ~30 s of `make check`.

GEN_CAPTURE_SRCS := tests/gen_capture.c user/capture.c
$(BUILD)/tests/gen_capture: $(GEN_CAPTURE_SRCS) user/capture.h bpf/gpuio_abi.h
	@mkdir -p $(BUILD)/tests
	$(CC) $(CFLAGS) -Wno-override-init -o $@ $(GEN_CAPTURE_SRCS)

FUZZ_SRCS   := tests/fuzz/fuzz_capture.c user/capture.c user/export_json.c user/export_model.c \
               user/json_writer.c user/calls.c user/log.c user/cmd_info.c \
               user/export_pftrace.c user/pftrace.c user/pb_writer.c user/out_file.c user/utf8.c
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Ibpf -Iuser \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
# libFuzzer ships in libclang-rt-14-dev (scripts/install-deps.sh test): without
# it the fuzzer is not built and t_fuzz_capture skips, saying why.
$(BUILD)/tests/fuzz_capture: $(FUZZ_SRCS) $(USER_HDRS)
	@mkdir -p $(BUILD)/tests
	@if [ -f "$$($(CLANG) -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-$$(uname -m).a" ]; then \
		echo "$(CLANG) $(FUZZ_CFLAGS) -o $@ $(FUZZ_SRCS) -lz"; \
		$(CLANG) $(FUZZ_CFLAGS) -o $@ $(FUZZ_SRCS) -lz; \
	else \
		echo "gpuio: libFuzzer not found (apt-get install libclang-rt-14-dev): $@ not built"; \
	fi

test-progs: $(BUILD)/tests/gen_capture $(BUILD)/tests/fuzz_capture

fuzz: $(BUILD)/tests/gen_capture $(BUILD)/tests/fuzz_capture
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-600} tests/run-all.sh tests/t_fuzz_capture.sh

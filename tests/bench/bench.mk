# tests/bench/bench.mk — build rules for `make bench` (included by the Makefile).
# tests/bench/run.sh builds these itself (`make bench-progs`) after
# `make all`, so the top-level `bench:` recipe needs no change.

BENCH_PROGS := $(BUILD)/bench/empty_run $(BUILD)/tests/preadloop $(BUILD)/tests/sock_pingpong \
               $(BUILD)/bench/fault_bench $(BUILD)/bench/bystander_loop

$(BUILD)/bench/bystander_loop: tests/bench/bystander_loop.c
	@mkdir -p $(BUILD)/bench
	$(CC) -O2 -g -Wall -o $@ $<

$(BUILD)/bench/fault_bench: tests/bench/fault_bench.c
	@mkdir -p $(BUILD)/bench
	$(CC) -O2 -g -Wall -D_GNU_SOURCE -o $@ $<

$(BUILD)/bench/empty_run: tests/bench/empty_run.c $(BUILD)/bench_empty.skel.h | $(BUILD)/.deps-build
	@mkdir -p $(BUILD)/bench
	$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)

bench-progs: $(BENCH_PROGS)
.PHONY: bench-progs

# tests/unit/unit.mk — unit tests of libgpuio.a: tests/unit/unit_NAME.c ->
# build/tests/unit/unit_NAME (with cmd/options.o, the one command helper
# they test), run by tests/t_unit.sh (part of `make check`).
UNIT_SRCS := $(wildcard tests/unit/unit_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/unit.h $(LIBGPUIO) $(BUILD)/user/cmd/options.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(BUILD)/user/cmd/options.o $(LIBGPUIO) $(LDLIBS)
test-progs: $(UNIT_BINS)

# tests/gpu/bundle/bundle.mk — `make gpu-bundle`: the self-contained folder
# for a GPU machine (tests/gpu/bundle/README.md). Included by the Makefile.
#
# build/bundle/gpuio is the same objects as build/gpuio, linked with libbpf,
# libelf and zlib in statically and an RPATH of $ORIGIN/lib for the rest: an
# RPATH (not the newer RUNPATH) also serves the libraries' own dependencies
# (libmicrohttpd -> gnutls -> ...).
BUNDLE_GPUIO := $(BUILD)/bundle/gpuio
BUNDLE_LDLIBS := -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic -lmicrohttpd -lpthread -lm \
                 -Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN/lib'

.PHONY: gpu-bundle
$(BUNDLE_GPUIO): $(CMD_OBJS) $(LIBGPUIO) tests/gpu/bundle/bundle.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(filter %.o %.a,$^) -o $@ $(BUNDLE_LDLIBS)

gpu-bundle: $(BUNDLE_GPUIO) $(CUPTI_LIB)
	@tests/gpu/bundle/make-bundle.sh $(BUILD) $(BUNDLE_GPUIO)

# the suite checks the bundle (tests/t_gpu_bundle.sh) where it can be built
ifneq ($(CUPTI_HDR),)
test-progs: gpu-bundle
endif

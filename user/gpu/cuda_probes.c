// SPDX-License-Identifier: MIT
/* cuda_probes.c — CUDA API uprobes per library file. See cuda_probes.h. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "gpuio.skel.h"
#include "capture/capture.h"
#include "gpu/cuda_probes.h"
#include "trace/cuda_spec.h"
#include "lib/keyset.h"
#include "trace/loader.h"
#include "lib/log.h"

/* ---- what each function's arguments mean ------------------------------ */

/* An operand as written in the tables: arg is 1-based (0 = absent), off 0 = the argument itself. */
struct opnd {
	__u8 arg1;
	__u8 size;
	__u16 off;
};
#define ARG(i)          { (i) + 1, 8, 0 }
#define ARG32(i)        { (i) + 1, 4, 0 }
#define FLD(i, o, sz)   { (i) + 1, sz, o }   /* field at byte o of the struct argument i points to */

struct cuda_fn {
	const char *name;          /* exported name; _ptds / _ptsz variants are probed too */
	__u8 kind;                 /* GPUIO_API_* */
	__u8 mk_how;               /* CUDA_MK_* */
	__u8 mk_fixed;
	__u16 mult;
	struct opnd b[3], stream, func, mk, mk2;
};

/* a copy whose direction is a cudaMemcpyKind argument (mk) */
#define RT_COPY .kind = GPUIO_API_MEMCPY, .mk_how = CUDA_MK_RT_ENUM

/*
 * libcudart (SysV x86-64: a dim3 by value takes two registers, so
 * cudaLaunchKernel's sharedMem and stream are stack arguments 6 and 7).
 */
static const struct cuda_fn rt_fns[] = {
	{ .name = "cudaLaunchKernel", .kind = GPUIO_API_LAUNCH, .func = ARG(0), .stream = ARG(7) },
	{ .name = "__cudaLaunchKernel", .kind = GPUIO_API_LAUNCH, .func = ARG(0), .stream = ARG(7) },
	{ .name = "cudaLaunchCooperativeKernel", .kind = GPUIO_API_LAUNCH, .func = ARG(0), .stream = ARG(7) },
	/* cudaLaunchKernelExC(const cudaLaunchConfig_t *cfg, const void *func, void **args) */
	{ .name = "cudaLaunchKernelExC", .kind = GPUIO_API_LAUNCH, .func = ARG(1), .stream = FLD(0, 32, 8) },
	{ .name = "cudaMemcpy", RT_COPY, .b = { ARG(2) }, .mk = ARG32(3) },
	{ .name = "cudaMemcpyAsync", RT_COPY, .b = { ARG(2) }, .mk = ARG32(3),
	  .stream = ARG(4) },
	{ .name = "cudaMemcpy2D", RT_COPY, .b = { ARG(4), ARG(5) }, .mk = ARG32(6) },
	{ .name = "cudaMemcpy2DAsync", RT_COPY, .b = { ARG(4), ARG(5) },
	  .mk = ARG32(6), .stream = ARG(7) },
	/* cudaMemcpy3DParms: extent {width, height, depth} at 128, kind at 152 */
	{ .name = "cudaMemcpy3D", RT_COPY,
	  .b = { FLD(0, 128, 8), FLD(0, 136, 8), FLD(0, 144, 8) }, .mk = FLD(0, 152, 4) },
	{ .name = "cudaMemcpy3DAsync", RT_COPY,
	  .b = { FLD(0, 128, 8), FLD(0, 136, 8), FLD(0, 144, 8) }, .mk = FLD(0, 152, 4),
	  .stream = ARG(1) },
	{ .name = "cudaMemcpyPeer", .kind = GPUIO_API_MEMCPY, .mk_how = CUDA_MK_FIXED, .mk_fixed = GPUIO_MEMCPY_PTOP, .b = { ARG(4) } },
	{ .name = "cudaMemcpyPeerAsync", .kind = GPUIO_API_MEMCPY, .mk_how = CUDA_MK_FIXED, .mk_fixed = GPUIO_MEMCPY_PTOP, .b = { ARG(4) },
	  .stream = ARG(5) },
	{ .name = "cudaMemcpyToSymbol", RT_COPY, .b = { ARG(2) }, .mk = ARG32(4) },
	{ .name = "cudaMemcpyToSymbolAsync", RT_COPY, .b = { ARG(2) },
	  .mk = ARG32(4), .stream = ARG(5) },
	{ .name = "cudaMemcpyFromSymbol", RT_COPY, .b = { ARG(2) }, .mk = ARG32(4) },
	{ .name = "cudaMemcpyFromSymbolAsync", RT_COPY, .b = { ARG(2) },
	  .mk = ARG32(4), .stream = ARG(5) },
	{ .name = "cudaMemset", .kind = GPUIO_API_MEMSET, .b = { ARG(2) } },
	{ .name = "cudaMemsetAsync", .kind = GPUIO_API_MEMSET, .b = { ARG(2) }, .stream = ARG(3) },
	{ .name = "cudaMemset2D", .kind = GPUIO_API_MEMSET, .b = { ARG(3), ARG(4) } },
	{ .name = "cudaMemset2DAsync", .kind = GPUIO_API_MEMSET, .b = { ARG(3), ARG(4) }, .stream = ARG(5) },
	{ .name = "cudaMemset3D", .kind = GPUIO_API_MEMSET },    /* structs by value on the stack: name only */
	{ .name = "cudaMemset3DAsync", .kind = GPUIO_API_MEMSET },
	{ .name = "cudaDeviceSynchronize", .kind = GPUIO_API_SYNC },
	{ .name = "cudaStreamSynchronize", .kind = GPUIO_API_SYNC, .stream = ARG(0) },
	{ .name = "cudaEventSynchronize", .kind = GPUIO_API_SYNC },
	{ .name = "cudaGraphLaunch", .kind = GPUIO_API_GRAPH_LAUNCH, .stream = ARG(1) },
	{ .name = "cudaMalloc", .kind = GPUIO_API_MALLOC, .b = { ARG(1) } },
	{ .name = "cudaMallocAsync", .kind = GPUIO_API_MALLOC, .b = { ARG(1) }, .stream = ARG(2) },
	{ .name = "cudaMallocHost", .kind = GPUIO_API_MALLOC, .b = { ARG(1) } },
	{ .name = "cudaHostAlloc", .kind = GPUIO_API_MALLOC, .b = { ARG(1) } },
	{ .name = "cudaMallocManaged", .kind = GPUIO_API_MALLOC, .b = { ARG(1) } },
	{ .name = "cudaMallocPitch", .kind = GPUIO_API_MALLOC, .b = { ARG(2), ARG(3) } },
	{ .name = "cudaFree", .kind = GPUIO_API_FREE },
	{ .name = "cudaFreeAsync", .kind = GPUIO_API_FREE, .stream = ARG(1) },
	{ .name = "cudaFreeHost", .kind = GPUIO_API_FREE },
};

/* libcuda.so.1: the names cuda.h maps the API to (_v2 where it has one). */
#define DRV_COPY(n, k, nbytes_arg, stream_arg) \
	{ .name = n, .kind = GPUIO_API_MEMCPY, .mk_how = CUDA_MK_FIXED, .mk_fixed = k, \
	  .b = { ARG(nbytes_arg) }, .stream = stream_arg }
#define NO_OPND { 0, 0, 0 }
/* CUDA_MEMCPY2D: srcMemoryType 16, dstMemoryType 72, WidthInBytes 112, Height 120 */
#define DRV_2D .b = { FLD(0, 112, 8), FLD(0, 120, 8) }, .mk = FLD(0, 16, 4), .mk2 = FLD(0, 72, 4)
/* CUDA_MEMCPY3D: srcMemoryType 32, dstMemoryType 120, WidthInBytes 176, Height 184, Depth 192 */
#define DRV_3D .b = { FLD(0, 176, 8), FLD(0, 184, 8), FLD(0, 192, 8) }, \
	       .mk = FLD(0, 32, 4), .mk2 = FLD(0, 120, 4)
static const struct cuda_fn drv_fns[] = {
	/* cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sharedMem, hStream, params, extra) */
	{ .name = "cuLaunchKernel", .kind = GPUIO_API_LAUNCH, .func = ARG(0), .stream = ARG(8) },
	{ .name = "cuLaunchCooperativeKernel", .kind = GPUIO_API_LAUNCH, .func = ARG(0), .stream = ARG(8) },
	/* cuLaunchKernelEx(const CUlaunchConfig *cfg, f, params, extra): hStream at 32 */
	{ .name = "cuLaunchKernelEx", .kind = GPUIO_API_LAUNCH, .func = ARG(1), .stream = FLD(0, 32, 8) },
	DRV_COPY("cuMemcpy", GPUIO_MEMCPY_UNKNOWN, 2, NO_OPND),
	DRV_COPY("cuMemcpyAsync", GPUIO_MEMCPY_UNKNOWN, 2, ARG(3)),
	DRV_COPY("cuMemcpyHtoD_v2", GPUIO_MEMCPY_HTOD, 2, NO_OPND),
	DRV_COPY("cuMemcpyDtoH_v2", GPUIO_MEMCPY_DTOH, 2, NO_OPND),
	DRV_COPY("cuMemcpyDtoD_v2", GPUIO_MEMCPY_DTOD, 2, NO_OPND),
	DRV_COPY("cuMemcpyHtoDAsync_v2", GPUIO_MEMCPY_HTOD, 2, ARG(3)),
	DRV_COPY("cuMemcpyDtoHAsync_v2", GPUIO_MEMCPY_DTOH, 2, ARG(3)),
	DRV_COPY("cuMemcpyDtoDAsync_v2", GPUIO_MEMCPY_DTOD, 2, ARG(3)),
	DRV_COPY("cuMemcpyPeer", GPUIO_MEMCPY_PTOP, 4, NO_OPND),
	DRV_COPY("cuMemcpyPeerAsync", GPUIO_MEMCPY_PTOP, 4, ARG(5)),
	{ .name = "cuMemcpy2D_v2", .kind = GPUIO_API_MEMCPY, .mk_how = CUDA_MK_DRV_TYPES, DRV_2D },
	{ .name = "cuMemcpy2DUnaligned_v2", .kind = GPUIO_API_MEMCPY, .mk_how = CUDA_MK_DRV_TYPES, DRV_2D },
	{ .name = "cuMemcpy2DAsync_v2", .kind = GPUIO_API_MEMCPY, .mk_how = CUDA_MK_DRV_TYPES, DRV_2D, .stream = ARG(1) },
	{ .name = "cuMemcpy3D_v2", .kind = GPUIO_API_MEMCPY, .mk_how = CUDA_MK_DRV_TYPES, DRV_3D },
	{ .name = "cuMemcpy3DAsync_v2", .kind = GPUIO_API_MEMCPY, .mk_how = CUDA_MK_DRV_TYPES, DRV_3D, .stream = ARG(1) },
	/* cuMemsetD8/16/32(dst, value, N elements) */
	{ .name = "cuMemsetD8_v2", .kind = GPUIO_API_MEMSET, .mult = 1, .b = { ARG(2) } },
	{ .name = "cuMemsetD16_v2", .kind = GPUIO_API_MEMSET, .mult = 2, .b = { ARG(2) } },
	{ .name = "cuMemsetD32_v2", .kind = GPUIO_API_MEMSET, .mult = 4, .b = { ARG(2) } },
	{ .name = "cuMemsetD8Async", .kind = GPUIO_API_MEMSET, .mult = 1, .b = { ARG(2) }, .stream = ARG(3) },
	{ .name = "cuMemsetD16Async", .kind = GPUIO_API_MEMSET, .mult = 2, .b = { ARG(2) }, .stream = ARG(3) },
	{ .name = "cuMemsetD32Async", .kind = GPUIO_API_MEMSET, .mult = 4, .b = { ARG(2) }, .stream = ARG(3) },
	/* cuMemsetD2D8/16/32(dst, pitch, value, width, height) */
	{ .name = "cuMemsetD2D8_v2", .kind = GPUIO_API_MEMSET, .mult = 1, .b = { ARG(3), ARG(4) } },
	{ .name = "cuMemsetD2D16_v2", .kind = GPUIO_API_MEMSET, .mult = 2, .b = { ARG(3), ARG(4) } },
	{ .name = "cuMemsetD2D32_v2", .kind = GPUIO_API_MEMSET, .mult = 4, .b = { ARG(3), ARG(4) } },
	{ .name = "cuMemsetD2D8Async", .kind = GPUIO_API_MEMSET, .mult = 1, .b = { ARG(3), ARG(4) }, .stream = ARG(5) },
	{ .name = "cuMemsetD2D16Async", .kind = GPUIO_API_MEMSET, .mult = 2, .b = { ARG(3), ARG(4) }, .stream = ARG(5) },
	{ .name = "cuMemsetD2D32Async", .kind = GPUIO_API_MEMSET, .mult = 4, .b = { ARG(3), ARG(4) }, .stream = ARG(5) },
	{ .name = "cuCtxSynchronize", .kind = GPUIO_API_SYNC },
	{ .name = "cuCtxSynchronize_v2", .kind = GPUIO_API_SYNC },
	{ .name = "cuStreamSynchronize", .kind = GPUIO_API_SYNC, .stream = ARG(0) },
	{ .name = "cuEventSynchronize", .kind = GPUIO_API_SYNC },
	{ .name = "cuGraphLaunch", .kind = GPUIO_API_GRAPH_LAUNCH, .stream = ARG(1) },
	{ .name = "cuMemAlloc_v2", .kind = GPUIO_API_MALLOC, .b = { ARG(1) } },
	{ .name = "cuMemAllocAsync", .kind = GPUIO_API_MALLOC, .b = { ARG(1) }, .stream = ARG(2) },
	{ .name = "cuMemAllocHost_v2", .kind = GPUIO_API_MALLOC, .b = { ARG(1) } },
	{ .name = "cuMemHostAlloc", .kind = GPUIO_API_MALLOC, .b = { ARG(1) } },
	{ .name = "cuMemAllocManaged", .kind = GPUIO_API_MALLOC, .b = { ARG(1) } },
	{ .name = "cuMemAllocPitch_v2", .kind = GPUIO_API_MALLOC, .b = { ARG(2), ARG(3) } },
	{ .name = "cuMemFree_v2", .kind = GPUIO_API_FREE },
	{ .name = "cuMemFreeAsync", .kind = GPUIO_API_FREE, .stream = ARG(1) },
	{ .name = "cuMemFreeHost", .kind = GPUIO_API_FREE },
};

/* Per-thread-stream variants have the same arguments. */
static const char *const suffixes[] = { "", "_ptds", "_ptsz" };

#define MAX_LIB_LINKS 1024

struct cuda_probes {
	struct gpuio_bpf *skel;
	bool multi;                         /* uprobe.multi links (one per library and direction) */
	int *fds;                           /* uprobe.multi link fds */
	int nfds, cap_fds;
	int specs_fd;
	char slot_name[CUDA_SPEC_MAX][48];  /* names of the filled cuda_specs slots */
	int nslots;
	struct keyset *files;               /* (st_dev, st_ino) attached */
	struct keyset *mapkeys;             /* (maps dev, ino) already looked at */
	struct bpf_link **links;
	int nlinks, cap_links;
	int nlibs, nfuncs;
};

static void elf_init(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

int cuda_probes__new(struct gpuio_loader *l, struct cuda_probes **out)
{
	struct cuda_probes *cp;

	if (!strcmp(l->cuda_mode, "off"))
		return -ENOTSUP;
	cp = calloc(1, sizeof(*cp));
	if (!cp)
		return -ENOMEM;
	cp->skel = l->skel;
	cp->multi = !strcmp(l->cuda_mode, "uprobe.multi");
	cp->specs_fd = bpf_map__fd(l->skel->maps.cuda_specs);
	cp->files = keyset__new(8);
	cp->mapkeys = keyset__new(10);
	if (!cp->files || !cp->mapkeys) {
		cuda_probes__free(cp);
		return -ENOMEM;
	}
	elf_init();
	*out = cp;
	return 0;
}

static void opnd_set(struct cuda_operand *o, const struct opnd *t)
{
	o->arg = t->arg1 ? t->arg1 - 1 : CUDA_ARG_NONE;
	o->size = t->size ? t->size : 8;
	o->off = t->arg1 && t->off ? (__s16)t->off : CUDA_OFF_NONE;
}

/* The cuda_specs slot of symbol name (filled on first use), or -errno. */
static int spec_slot(struct cuda_probes *cp, const struct cuda_fn *fn, const char *name, int source)
{
	struct cuda_spec s;
	__u32 key;

	for (int i = 0; i < cp->nslots; i++)
		if (!strcmp(cp->slot_name[i], name))
			return i;
	if (cp->nslots >= CUDA_SPEC_MAX)
		return -ENOSPC;
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 3; i++)
		opnd_set(&s.bytes[i], &fn->b[i]);
	opnd_set(&s.stream, &fn->stream);
	opnd_set(&s.func, &fn->func);
	opnd_set(&s.mk, &fn->mk);
	opnd_set(&s.mk2, &fn->mk2);
	s.bytes_mult = fn->mult;
	s.source = (__u8)source;
	s.kind = fn->kind;
	s.mk_how = fn->mk_how;
	s.mk_fixed = fn->mk_fixed;
	snprintf(s.name, sizeof(s.name), "%s", name);
	key = (__u32)cp->nslots;
	if (bpf_map_update_elem(cp->specs_fd, &key, &s, BPF_ANY) != 0)
		return -errno;
	snprintf(cp->slot_name[cp->nslots], sizeof(cp->slot_name[0]), "%s", name);
	return cp->nslots++;
}

/* Table entry (and suffix) that the exported name is, or NULL. */
static const struct cuda_fn *lookup_fn(const struct cuda_fn *tab, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(tab[i].name);

		if (strncmp(name, tab[i].name, len))
			continue;
		for (size_t s = 0; s < sizeof(suffixes) / sizeof(suffixes[0]); s++)
			if (!strcmp(name + len, suffixes[s]))
				return &tab[i];
	}
	return NULL;
}

static int add_link(struct cuda_probes *cp, struct bpf_link *link)
{
	if (cp->nlinks == cp->cap_links) {
		int cap = cp->cap_links ? cp->cap_links * 2 : 64;
		struct bpf_link **n = realloc(cp->links, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		cp->links = n;
		cp->cap_links = cap;
	}
	cp->links[cp->nlinks++] = link;
	return 0;
}

static int attach_one(struct cuda_probes *cp, const char *path, pid_t pid, size_t off, int slot)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = (__u64)slot);
	struct bpf_link *entry, *ret;
	int err;

	uo.retprobe = false;
	entry = bpf_program__attach_uprobe_opts(cp->skel->progs.cuda_api_entry, pid, path, off, &uo);
	if (!entry)
		return -errno;
	uo.retprobe = true;
	ret = bpf_program__attach_uprobe_opts(cp->skel->progs.cuda_api_return, pid, path, off, &uo);
	if (!ret) {
		err = -errno;
		bpf_link__destroy(entry);
		return err;
	}
	if (add_link(cp, entry) || add_link(cp, ret)) {
		bpf_link__destroy(entry);
		bpf_link__destroy(ret);
		return -ENOMEM;
	}
	return 0;
}

/* BPF_LINK_CREATE for uprobe_multi, laid out by hand: libbpf 1.1 predates it. */
struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 um_flags;
	__u32 pid;
	__u32 pad;
};
#define BPF_LINK_CREATE_CMD     28
#define ATTACH_UPROBE_MULTI     48
#define UPROBE_MULTI_RETURN     1

int cuda_uprobe_multi_link(int prog_fd, const char *path, const unsigned long *offs,
			   const __u64 *cookies, int n, bool ret, pid_t pid)
{
	struct uprobe_multi_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (__u32)prog_fd;
	a.attach_type = ATTACH_UPROBE_MULTI;
	a.path = (__u64)(unsigned long)path;
	a.offsets = (__u64)(unsigned long)offs;
	a.cookies = (__u64)(unsigned long)cookies;
	a.cnt = (__u32)n;
	a.um_flags = ret ? UPROBE_MULTI_RETURN : 0;
	a.pid = pid > 0 ? (__u32)pid : 0;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE_CMD, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

static int add_fd(struct cuda_probes *cp, int fd)
{
	if (cp->nfds == cp->cap_fds) {
		int cap = cp->cap_fds ? cp->cap_fds * 2 : 16;
		int *n = realloc(cp->fds, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		cp->fds = n;
		cp->cap_fds = cap;
	}
	cp->fds[cp->nfds++] = fd;
	return 0;
}

/* All of a library's probes in two links (entry, return). */
static int attach_multi(struct cuda_probes *cp, const char *path, pid_t pid,
			const unsigned long *offs, const __u64 *cookies, int n)
{
	int efd, rfd, err;

	efd = cuda_uprobe_multi_link(bpf_program__fd(cp->skel->progs.cuda_multi_entry), path, offs, cookies, n,
			 false, pid);
	if (efd < 0)
		return efd;
	rfd = cuda_uprobe_multi_link(bpf_program__fd(cp->skel->progs.cuda_multi_return), path, offs, cookies, n,
			 true, pid);
	if (rfd < 0) {
		close(efd);
		return rfd;
	}
	if ((err = add_fd(cp, efd)) || (err = add_fd(cp, rfd))) {
		close(efd);
		close(rfd);
		return err;
	}
	return 0;
}

int cuda_lib_kind(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strncmp(base, "libcudart.so", 12))
		return CUDA_LIB_RT;
	if (!strncmp(base, "libcuda.so", 10))
		return CUDA_LIB_DRV;
	return 0;
}

int cuda_lib_funcs(int fd, int lib_kind, struct cuda_lib_func *out, int max)
{
	const struct cuda_fn *tab;
	GElf_Addr *addrs;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t ntab, nph = 0;
	struct { unsigned long lo, hi; } segs[16];
	int n = 0, nsegs = 0;

	if (lib_kind != CUDA_LIB_RT && lib_kind != CUDA_LIB_DRV)
		return -EINVAL;
	tab = lib_kind == CUDA_LIB_RT ? rt_fns : drv_fns;
	ntab = lib_kind == CUDA_LIB_RT ? sizeof(rt_fns) / sizeof(rt_fns[0])
				       : sizeof(drv_fns) / sizeof(drv_fns[0]);
	elf_init();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	addrs = calloc((size_t)(max > 0 ? max : 1), sizeof(*addrs));
	if (!addrs) {
		elf_end(elf);
		return -ENOMEM;
	}
	/* executable PT_LOAD segments, as file offsets */
	if (elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph && nsegs < 16; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
				segs[nsegs].lo = ph.p_offset;
				segs[nsegs++].hi = ph.p_offset + ph.p_filesz;
			}
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			const struct cuda_fn *fn;
			GElf_Shdr tsh;
			GElf_Sym sym;
			const char *name;
			Elf_Scn *tscn;
			bool dup = false;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !(fn = lookup_fn(tab, ntab, name)))
				continue;
			/* uprobes take a file offset */
			tscn = elf_getscn(elf, sym.st_shndx);
			if (!tscn || !gelf_getshdr(tscn, &tsh) || sym.st_value < tsh.sh_addr)
				continue;
			if (n >= max)
				continue;
			for (int j = 0; j < n && !dup; j++)
				dup = addrs[j] == sym.st_value;
			if (dup)
				continue;
			addrs[n] = sym.st_value;
			out[n].off = (unsigned long)(sym.st_value - tsh.sh_addr + tsh.sh_offset);
			out[n].seg_lo = out[n].seg_hi = out[n].off;
			for (int j = 0; j < nsegs; j++) {
				if (out[n].off >= segs[j].lo && out[n].off < segs[j].hi) {
					out[n].seg_lo = segs[j].lo;
					out[n].seg_hi = segs[j].hi;
				}
			}
			out[n].kind = fn->kind;
			out[n].fn = fn;
			snprintf(out[n].name, sizeof(out[n].name), "%s", name);
			n++;
		}
	}
	free(addrs);
	elf_end(elf);
	return n;
}

/* What to probe in one library: file offsets and their cuda_specs slots. */
struct addr_set {
	unsigned long offs[CUDA_LIB_FUNCS_MAX];
	__u64 cookies[CUDA_LIB_FUNCS_MAX];
	int nprobe;
};

int cuda_probes__attach_lib(struct cuda_probes *cp, const char *path, int lib_kind, pid_t pid)
{
	struct cuda_lib_func *funcs = NULL;
	struct addr_set *seen = NULL;
	struct stat st;
	int fd = -1, n = 0, failed = 0, err = 0, source, first_err = 0, nf;

	if (!cp)
		return -EINVAL;
	if (!lib_kind)
		lib_kind = cuda_lib_kind(path);
	if (lib_kind != CUDA_LIB_RT && lib_kind != CUDA_LIB_DRV)
		return -EINVAL;
	source = lib_kind == CUDA_LIB_RT ? GPUIO_API_UPROBE_RT : GPUIO_API_UPROBE_DRV;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = -errno;
		goto cleanup;
	}
	/* one attach per file, whatever path or process it was found through */
	if (keyset__contains(cp->files, st.st_dev, st.st_ino))
		goto cleanup;
	funcs = calloc(CUDA_LIB_FUNCS_MAX, sizeof(*funcs));
	seen = calloc(1, sizeof(*seen));
	if (!funcs || !seen) {
		err = -ENOMEM;
		goto cleanup;
	}
	nf = cuda_lib_funcs(fd, lib_kind, funcs, CUDA_LIB_FUNCS_MAX);
	if (nf < 0) {
		err = nf;
		goto cleanup;
	}
	for (int i = 0; i < nf; i++) {
		int slot = spec_slot(cp, funcs[i].fn, funcs[i].name, source);

		if (slot < 0) {
			failed++;
			continue;
		}
		seen->offs[seen->nprobe] = funcs[i].off;
		seen->cookies[seen->nprobe++] = (__u64)slot;
	}
	if (cp->multi && seen->nprobe) {
		err = attach_multi(cp, path, pid, seen->offs, seen->cookies, seen->nprobe);
		if (err) {
			first_err = err;
			failed += seen->nprobe;
		} else {
			n = seen->nprobe;
		}
	}
	for (int i = 0; !cp->multi && i < seen->nprobe; i++) {
		err = attach_one(cp, path, pid, seen->offs[i], (int)seen->cookies[i]);
		if (err) {
			if (!first_err)
				first_err = err;
			failed++;
			pr_debug("cuda uprobe %s in %s: %s", cp->slot_name[seen->cookies[i]], path,
				 strerror(-err));
			continue;
		}
		n++;
	}
	err = 0;
	keyset__test_and_add(cp->files, st.st_dev, st.st_ino);
	if (n) {
		cp->nlibs++;
		cp->nfuncs += n;
	}
	if (failed)
		pr_warn("cuda uprobes: %d functions of %s not probed (%s)", failed, path,
			first_err ? strerror(-first_err) : "too many names");
	pr_info("cuda uprobes: %s: %d functions", path, n);
	err = n;
cleanup:
	free(seen);
	free(funcs);
	if (fd >= 0)
		close(fd);
	return err;
}

int cuda_probes__scan_pid(struct cuda_probes *cp, pid_t pid)
{
	char fname[64], line[PATH_MAX + 256];
	int found = 0;
	FILE *f;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", pid);
	f = fopen(fname, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		unsigned long long ino;
		char path[PATH_MAX], full[PATH_MAX + 32];
		int kind, pos = 0;

		/* start-end perms offset dev inode path */
		if (sscanf(line, "%*x-%*x %*4s %*x %x:%x %llu %n", &maj, &min, &ino, &pos) < 3 ||
		    !pos || line[pos] != '/')
			continue;
		snprintf(path, sizeof(path), "%s", line + pos);
		path[strcspn(path, "\n")] = 0;
		kind = cuda_lib_kind(path);
		if (!kind || strstr(path, " (deleted)"))
			continue;
		found |= kind;
		if (!cp || keyset__test_and_add(cp->mapkeys, makedev(maj, min), ino))
			continue;
		/* the path is the process's view: go through its root (containers) */
		snprintf(full, sizeof(full), "/proc/%d/root%s", pid, path);
		cuda_probes__attach_lib(cp, full, kind, -1);
	}
	fclose(f);
	return found;
}

/* ---- libraries a command will load ------------------------------------ */

static bool file_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Look name up in the dirs of a ':'-separated list ($ORIGIN = origin). */
static bool find_in_dirs(const char *dirs, const char *origin, const char *name, char *out, size_t len)
{
	char buf[4096], *save = NULL;

	if (!dirs)
		return false;
	snprintf(buf, sizeof(buf), "%s", dirs);
	for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (!strncmp(d, "$ORIGIN", 7))
			snprintf(out, len, "%s%s/%s", origin, d + 7, name);
		else if (!strncmp(d, "${ORIGIN}", 9))
			snprintf(out, len, "%s%s/%s", origin, d + 9, name);
		else
			snprintf(out, len, "%s/%s", d, name);
		if (file_exists(out))
			return true;
	}
	return false;
}

/* name in the ld.so cache (`ldconfig -p`), x86-64 entries. */
static bool find_in_ldcache(const char *name, char *out, size_t len)
{
	char line[PATH_MAX + 128];
	bool ok = false;
	FILE *p = popen("/sbin/ldconfig -p 2>/dev/null", "re");

	if (!p)
		return false;
	while (!ok && fgets(line, sizeof(line), p)) {
		char *s = line + strspn(line, " \t"), *arrow;
		size_t n = strlen(name);

		if (strncmp(s, name, n) || s[n] != ' ' || !strstr(s, "x86-64"))
			continue;
		arrow = strstr(s, "=> ");
		if (!arrow)
			continue;
		snprintf(out, len, "%s", arrow + 3);
		out[strcspn(out, "\n")] = 0;
		ok = file_exists(out);
	}
	pclose(p);
	return ok;
}

static bool find_lib(const char *name, const char *rpath, const char *runpath, const char *origin,
		     char *out, size_t len)
{
	/* ld.so order: RPATH (when no RUNPATH), LD_LIBRARY_PATH, RUNPATH, cache, defaults */
	if (!runpath && find_in_dirs(rpath, origin, name, out, len))
		return true;
	if (find_in_dirs(getenv("LD_LIBRARY_PATH"), origin, name, out, len))
		return true;
	if (find_in_dirs(runpath, origin, name, out, len))
		return true;
	if (find_in_ldcache(name, out, len))
		return true;
	return find_in_dirs("/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib",
			    origin, name, out, len);
}

static bool resolve_exe(const char *exe, char *out, size_t len)
{
	if (strchr(exe, '/')) {
		snprintf(out, len, "%s", exe);
		return file_exists(out);
	}
	return find_in_dirs(getenv("PATH"), "", exe, out, len);
}

int cuda_probes__attach_for_exec(struct cuda_probes *cp, const char *exe)
{
	char path[PATH_MAX], origin[PATH_MAX], lib[PATH_MAX], *rpath = NULL, *runpath = NULL;
	char *needed[64];
	int nneeded = 0, nlibs = 0, fd = -1;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;

	if (!cp || !resolve_exe(exe, path, sizeof(path)))
		return 0;
	if (!realpath(path, origin))
		snprintf(origin, sizeof(origin), "%s", path);
	*strrchr(origin, '/') = 0;   /* realpath is absolute: has a '/' */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Dyn dyn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *s;

			if (!gelf_getdyn(data, (int)i, &dyn))
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_RPATH && !rpath)
				rpath = strdup(s);
			else if (dyn.d_tag == DT_RUNPATH && !runpath)
				runpath = strdup(s);
			else if (dyn.d_tag == DT_NEEDED && cuda_lib_kind(s) &&
				 nneeded < (int)(sizeof(needed) / sizeof(needed[0])))
				needed[nneeded++] = strdup(s);
		}
	}
	for (int i = 0; i < nneeded; i++) {
		if (needed[i] && find_lib(needed[i], rpath, runpath, origin, lib, sizeof(lib)) &&
		    cuda_probes__attach_lib(cp, lib, 0, -1) > 0)
			nlibs++;
		free(needed[i]);
	}
	/* libcudart dlopens the driver by this name (and so do most frameworks) */
	if (find_lib("libcuda.so.1", rpath, runpath, origin, lib, sizeof(lib)) &&
	    cuda_probes__attach_lib(cp, lib, CUDA_LIB_DRV, -1) > 0)
		nlibs++;
	free(rpath);
	free(runpath);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return nlibs;
}

int cuda_probes__nlibs(const struct cuda_probes *cp)
{
	return cp ? cp->nlibs : 0;
}

int cuda_probes__nfuncs(const struct cuda_probes *cp)
{
	return cp ? cp->nfuncs : 0;
}

struct unlink_job {
	struct bpf_link **links;
	int n, step;
};

static void *unlink_slice(void *arg)
{
	struct unlink_job *j = arg;

	for (int i = 0; i < j->n; i += j->step)
		bpf_link__destroy(j->links[i]);
	return NULL;
}

/*
 * Each uprobe detach waits for an RCU-tasks-trace and an SRCU grace period
 * (~100 ms here): one by one, 100 probes take >10 s. Detached from many
 * threads at once, the waits share grace periods.
 */
static void destroy_links(struct bpf_link **links, int n)
{
	enum { NT = 32 };
	struct unlink_job jobs[NT];
	pthread_t th[NT];
	bool started[NT] = { false };
	int nt = n < NT ? n : NT;

	for (int t = 0; t < nt; t++) {
		jobs[t] = (struct unlink_job){ .links = links + t, .n = n - t, .step = nt };
		started[t] = pthread_create(&th[t], NULL, unlink_slice, &jobs[t]) == 0;
		if (!started[t])
			unlink_slice(&jobs[t]);
	}
	for (int t = 0; t < nt; t++)
		if (started[t])
			pthread_join(th[t], NULL);
}

void cuda_probes__free(struct cuda_probes *cp)
{
	if (!cp)
		return;
	destroy_links(cp->links, cp->nlinks);
	free(cp->links);
	for (int i = 0; i < cp->nfds; i++)
		close(cp->fds[i]);
	free(cp->fds);
	keyset__free(cp->files);
	keyset__free(cp->mapkeys);
	free(cp);
}

/* ---- launch stub names ------------------------------------------------ */

struct sym {
	__u64 addr, size;
	__u32 name;                /* offset in names */
};

/* Function symbols of one ELF file, sorted by address. */
struct symtab {
	__u64 dev, ino;
	struct sym *syms;
	size_t nsyms;
	char *names;
	struct {
		__u64 off, filesz, vaddr;
	} load[16];
	int nload;
};

#define SYM_CACHE 8
static struct symtab *sym_cache[SYM_CACHE];
static int sym_cache_next;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void symtab_free(struct symtab *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->names);
	free(t);
}

static struct symtab *symtab_load(const char *path, __u64 dev, __u64 ino)
{
	struct symtab *t = calloc(1, sizeof(*t));
	size_t cap = 0, ncap = 0, nlen = 0;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	size_t nph = 0;
	int fd;

	if (!t)
		return NULL;
	t->dev = dev;
	t->ino = ino;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_getphdrnum(elf, &nph) != 0)
		goto fail;
	for (size_t i = 0; i < nph && t->nload < 16; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			t->load[t->nload].off = ph.p_offset;
			t->load[t->nload].filesz = ph.p_filesz;
			t->load[t->nload].vaddr = ph.p_vaddr;
			t->nload++;
		}
	}
	/* .symtab has the static stubs (nvcc's are local); .dynsym the exported */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			size_t l;

			if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			l = strlen(name) + 1;
			if (t->nsyms == cap) {
				struct sym *n;

				cap = cap ? cap * 2 : 1024;
				n = realloc(t->syms, cap * sizeof(*n));
				if (!n)
					goto fail;
				t->syms = n;
			}
			if (nlen + l > ncap) {
				char *n;

				ncap = (nlen + l) * 2 + 4096;
				n = realloc(t->names, ncap);
				if (!n)
					goto fail;
				t->names = n;
			}
			memcpy(t->names + nlen, name, l);
			t->syms[t->nsyms].addr = s.st_value;
			t->syms[t->nsyms].size = s.st_size;
			t->syms[t->nsyms].name = (__u32)nlen;
			t->nsyms++;
			nlen += l;
		}
	}
	elf_end(elf);
	close(fd);
	qsort(t->syms, t->nsyms, sizeof(*t->syms), sym_cmp);
	return t;
fail:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	symtab_free(t);
	return NULL;
}

static struct symtab *symtab_get(const char *path, __u64 dev, __u64 ino)
{
	struct symtab *t;

	for (int i = 0; i < SYM_CACHE; i++)
		if (sym_cache[i] && sym_cache[i]->dev == dev && sym_cache[i]->ino == ino)
			return sym_cache[i];
	t = symtab_load(path, dev, ino);
	if (!t)
		return NULL;
	symtab_free(sym_cache[sym_cache_next]);
	sym_cache[sym_cache_next] = t;
	sym_cache_next = (sym_cache_next + 1) % SYM_CACHE;
	return t;
}

void cuda_probes__sym_cache_free(void)
{
	for (int i = 0; i < SYM_CACHE; i++) {
		symtab_free(sym_cache[i]);
		sym_cache[i] = NULL;
	}
}

/* The function containing vaddr (exact start preferred), or NULL. */
static const char *symtab_find(const struct symtab *t, __u64 vaddr)
{
	size_t lo = 0, hi = t->nsyms;

	while (lo < hi) {           /* first symbol with addr > vaddr */
		size_t mid = (lo + hi) / 2;

		if (t->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	/* among aliases at that address, any name does */
	if (t->syms[lo].addr == vaddr ||
	    (t->syms[lo].size && vaddr < t->syms[lo].addr + t->syms[lo].size))
		return t->names + t->syms[lo].name;
	return NULL;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* libstdc++'s demangler, loaded on first use (gpuio itself is C). */
static demangle_fn demangler(void)
{
	static bool tried;
	static demangle_fn fn;

	if (!tried) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

		tried = true;
		fn = h ? (demangle_fn)dlsym(h, "__cxa_demangle") : NULL;
		if (!fn)
			pr_debug("no libstdc++ demangler: launch stubs keep their mangled names");
	}
	return fn;
}

int cuda_probes__emit_sym(struct gpuio_cap_writer *w, pid_t pid, __u64 addr, __u64 ts)
{
	char fname[64], line[PATH_MAX + 256], path[PATH_MAX + 32];
	unsigned long long start, end, off, ino, foff = 0;
	unsigned int maj, min;
	const struct symtab *t = NULL;
	struct gpuio_gpu_sym rec;
	const char *name;
	char *dem = NULL;
	bool found = false;
	int pos, status = -1;
	size_t len;
	FILE *f;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", pid);
	f = fopen(fname, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		pos = 0;
		if (sscanf(line, "%llx-%llx %*4s %llx %x:%x %llu %n", &start, &end, &off, &maj, &min,
			   &ino, &pos) < 6 || addr < start || addr >= end)
			continue;
		if (pos && line[pos] == '/') {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof(path), "/proc/%d/root%s", pid, line + pos);
			foff = addr - start + off;
			found = true;
		}
		break;
	}
	fclose(f);
	if (!found)
		return -ENOENT;
	t = symtab_get(path, makedev(maj, min), ino);
	if (!t)
		return -ENOEXEC;
	for (int i = 0; i < t->nload; i++) {
		if (foff >= t->load[i].off && foff < t->load[i].off + t->load[i].filesz) {
			name = symtab_find(t, foff - t->load[i].off + t->load[i].vaddr);
			goto named;
		}
	}
	return -ENOENT;
named:
	if (!name)
		return -ENOENT;
	if (demangler())
		dem = demangler()(name, NULL, NULL, &status);
	if (dem && status == 0)
		name = dem;
	memset(&rec, 0, offsetof(struct gpuio_gpu_sym, name));
	len = strnlen(name, sizeof(rec.name));
	memcpy(rec.name, name, len);
	rec.name_len = (__u16)len;
	rec.addr = addr;
	rec.hdr.type = GPUIO_REC_GPU_SYM;
	rec.hdr.size = (__u16)((offsetof(struct gpuio_gpu_sym, name) + len + 7) & ~(size_t)7);
	memset(rec.name + len, 0, rec.hdr.size - offsetof(struct gpuio_gpu_sym, name) - len);
	rec.hdr.pid = (__u32)pid;
	rec.hdr.ts = ts;
	free(dem);
	return gpuio_cap_writer__append(w, &rec, rec.hdr.size);
}

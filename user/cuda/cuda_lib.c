// SPDX-License-Identifier: MIT
/*
 * cuda_lib.c — the CUDA functions gpuio probes, as data: for each runtime
 * (libcudart) and driver (libcuda.so.1) function, its kind and which
 * arguments the generic uprobe reads (bytes, stream, copy kind, function
 * pointer); which table a library file gets.
 */
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
#include "bpf/gpuio_abi.h"
#include "cuda/cuda_lib.h"
#include "bpf/trace/cuda_spec.h"
#include "lib/keyset.h"
#include "lib/log.h"
#include "lib/units.h"

#define ARG(i)          { (i) + 1, 8, 0 }
#define ARG32(i)        { (i) + 1, 4, 0 }
#define FLD(i, o, sz)   { (i) + 1, sz, o }   /* field at byte o of the struct argument i points to */

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

/* Table entry (and suffix) that the exported name is, or NULL. */
const struct cuda_fn *cuda_lookup_fn(const struct cuda_fn *tab, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(tab[i].name);

		if (strncmp(name, tab[i].name, len))
			continue;
		for (size_t s = 0; s < ARRAY_SIZE(suffixes); s++)
			if (!strcmp(name + len, suffixes[s]))
				return &tab[i];
	}
	return NULL;
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
	ntab = lib_kind == CUDA_LIB_RT ? ARRAY_SIZE(rt_fns)
				       : ARRAY_SIZE(drv_fns);
	cuda_elf_init();
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
			if (!name || !(fn = cuda_lookup_fn(tab, ntab, name)))
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

void cuda_elf_init(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
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


/*
 * Can this kernel attach prog_fd (loaded as uprobe.multi) per process? A
 * kernel without uprobe.multi still loads the program (6.1 checks no attach
 * type for kprobe programs) and refuses only the link; kernels before the
 * PID filtering fix (6.10) filter by thread, which would miss every CUDA
 * call made off the main thread. Two links that must fail, as libbpf probes
 * it: on "/" (a directory: -EBADF where supported), then with pid -1
 * (-EINVAL once the fix is in). 0, or -ENOTSUP with the reason in why.
 */
int cuda_uprobe_multi_probe(int prog_fd, char *why, size_t len)
{
	static const unsigned long off0;
	struct uprobe_multi_attr a;
	int fd, err;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (__u32)prog_fd;
	a.attach_type = ATTACH_UPROBE_MULTI;
	a.path = (__u64)(unsigned long)"/";
	a.offsets = (__u64)(unsigned long)&off0;
	a.cnt = 1;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE_CMD, &a, sizeof(a));
	err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	if (err != EBADF) {
		snprintf(why, len, "no uprobe.multi links in this kernel (BPF_LINK_CREATE: %s)",
			 err ? strerror(err) : "accepted a directory");
		return -ENOTSUP;
	}
	a.pid = (__u32)-1;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE_CMD, &a, sizeof(a));
	err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	if (err != EINVAL) {
		snprintf(why, len, "uprobe.multi filters by thread, not process, in this kernel "
			 "(before the 6.10 fix)");
		return -ENOTSUP;
	}
	return 0;
}

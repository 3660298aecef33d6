/* SPDX-License-Identifier: MIT */
/*
 * cuda_lib.h — what gpuio knows of the CUDA libraries, for whoever probes
 * them (the tracer's CUDA API uprobes, trace/cuda_probes.c; the monitor's
 * counting probes, monitor/monitor_cuda.c): the known functions of
 * libcudart and libcuda and what their arguments mean (cuda_lib.c's
 * tables), which of them a library file exports, and the uprobe.multi link
 * that probes them all at once.
 */
#ifndef GPUIO_CUDA_LIB_H
#define GPUIO_CUDA_LIB_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* Library kinds, as cuda_probes__scan_pid reports them (bit mask). */
#define CUDA_LIB_RT  0x1   /* libcudart.so* */
#define CUDA_LIB_DRV 0x2   /* libcuda.so* (the driver) */

/* One known CUDA function a library file exports (cuda_lib_funcs). */
struct cuda_lib_func {
	unsigned long off;         /* file offset: what a uprobe takes */
	unsigned long seg_lo;      /* file offsets of the executable segment ... */
	unsigned long seg_hi;      /* ... holding it: [seg_lo, seg_hi) */
	__u8 kind;                 /* enum gpuio_api_kind */
	char name[48];             /* exported name (with its _ptds / _ptsz suffix) */
	const void *fn;            /* its table entry (cuda_probes.c's own use) */
};
#define CUDA_LIB_FUNCS_MAX 1024

/* CUDA_LIB_RT / CUDA_LIB_DRV from a path's file name, 0 for neither. */
int cuda_lib_kind(const char *path);
/*
 * The known CUDA functions (the tables in cuda_probes.c) that the ELF file
 * open at fd exports, for lib_kind CUDA_LIB_RT or CUDA_LIB_DRV; aliases
 * (one address, several names) once. Fills at most max. Returns the count
 * or -errno. Shared by the tracer (cuda_probes__attach_lib) and the monitor.
 */
int cuda_lib_funcs(int fd, int lib_kind, struct cuda_lib_func *out, int max);

/*
 * A uprobe.multi link (BPF_LINK_CREATE by hand: libbpf 1.1 predates it) of
 * prog_fd on n file offsets of path with their cookies; ret: return probes;
 * pid <= 0: every process. Returns the link fd or -errno.
 */
int cuda_uprobe_multi_link(int prog_fd, const char *path, const unsigned long *offs,
			   const __u64 *cookies, int n, bool ret, pid_t pid);
/* 0 when prog_fd (a uprobe.multi program) can be linked per process here;
 * else -ENOTSUP and why (no uprobe.multi, or its thread-only PID filter). */
int cuda_uprobe_multi_probe(int prog_fd, char *why, size_t len);

/* ---- what each function's arguments mean ------------------------------ */

/* An operand as written in the tables: arg is 1-based (0 = absent), off 0 = the argument itself. */
struct cuda_opnd {
	__u8 arg1;
	__u8 size;
	__u16 off;
};

struct cuda_fn {
	const char *name;          /* exported name; _ptds / _ptsz variants are probed too */
	__u8 kind;                 /* GPUIO_API_* */
	__u8 mk_how;               /* CUDA_MK_* */
	__u8 mk_fixed;
	__u16 mult;
	struct cuda_opnd b[3], stream, func, mk, mk2;
};


/* Table entry that the exported name is (with a _ptds/_ptsz suffix or not), or NULL. */
const struct cuda_fn *cuda_lookup_fn(const struct cuda_fn *tab, size_t n, const char *name);
/* libelf's version handshake, once. */
void cuda_elf_init(void);

#endif /* GPUIO_CUDA_LIB_H */

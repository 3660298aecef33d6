/* SPDX-License-Identifier: MIT */
/*
 * cuda_probes.h — CUDA API uprobes: attach the generic entry/return programs
 * of bpf/trace/cuda.bpf.h to every known CUDA function of a library file
 * (libcudart.so*, libcuda.so*), find such libraries in /proc/PID/maps, and
 * name kernel launch stubs from the process's ELF symbols.
 *
 * Probes are attached per traced process (the kernel's uprobe filter puts
 * breakpoints only in that process's memory): an untraced process using the
 * same library pays nothing. With -a (every process) each file is attached
 * once for all. A process whose CUPTI collector runs gets its CUDA calls
 * from CUPTI: cuda_probes__detach_pid removes its probes for good.
 */
#ifndef GPUIO_CUDA_PROBES_H
#define GPUIO_CUDA_PROBES_H
#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "cuda/cuda_lib.h"

struct gpuio_loader;
struct gpuio_cap_writer;
struct cuda_probes;

/* -ENOTSUP when the loader left the cuda layer off. every_process: -a. */
int cuda_probes__new(struct gpuio_loader *l, bool every_process, struct cuda_probes **out);
/*
 * Attach to the CUDA functions path exports (kind from its name unless
 * lib_kind is given: CUDA_LIB_RT / CUDA_LIB_DRV, 0 = by name). pid -1 = every
 * process. Returns the number of functions attached, 0 when this file is
 * attached already, or -errno.
 */
int cuda_probes__attach_lib(struct cuda_probes *cp, const char *path, int lib_kind, pid_t pid);
/*
 * Attach to the CUDA libraries pid maps (new ones only; none once pid was
 * detached). Returns the
 * CUDA_LIB_* mask of the libraries pid maps (attached now or before), or
 * -errno (-ESRCH when the process is gone). cp NULL: only report.
 */
int cuda_probes__scan_pid(struct cuda_probes *cp, pid_t pid);
/*
 * Before launching exe (a path, or a name looked up in $PATH) as pid: attach to
 * the CUDA libraries it links (DT_NEEDED via RPATH/RUNPATH, LD_LIBRARY_PATH,
 * the ld.so cache) and to the driver libcuda.so.1 that libcudart will
 * dlopen, so calls made before the first rescan are seen. Returns the number
 * of libraries attached.
 */
int cuda_probes__attach_for_exec(struct cuda_probes *cp, const char *exe, pid_t pid);
/*
 * pid's CUDA calls come from its CUPTI collector now: remove its probes
 * and never probe it again. Returns the number of libraries detached.
 */
int cuda_probes__detach_pid(struct cuda_probes *cp, pid_t pid);
/* Drop the probes of processes that exited. Returns libraries detached. */
int cuda_probes__reap(struct cuda_probes *cp);
int cuda_probes__nlibs(const struct cuda_probes *cp);
int cuda_probes__nfuncs(const struct cuda_probes *cp);
void cuda_probes__free(struct cuda_probes *cp);

/*
 * Name addr (a launch's host stub) from pid's ELF symbols and append a
 * GPUIO_REC_GPU_SYM record. Returns 0, or -errno when it cannot be named
 * (process gone, address not in a file, no symbol).
 */
int cuda_probes__emit_sym(struct gpuio_cap_writer *w, pid_t pid, __u64 addr, __u64 ts);

#endif

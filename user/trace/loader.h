/* SPDX-License-Identifier: MIT */
/*
 * loader.h — open, load and attach gpuio's BPF programs, choosing per layer
 * the best attach mode this kernel accepts (by trying, best first).
 */
#ifndef GPUIO_LOADER_H
#define GPUIO_LOADER_H
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "capture/cap_layers.h"

struct gpuio_bpf;
struct gpuio_cap_header;

/* Where Python stacks are taken (the trace's --stacks / --no-stacks) */
enum gpuio_stacks {
	GPUIO_STACKS_OFF,       /* none (and no interpreter looked for, unless sampling) */
	GPUIO_STACKS_SLEEPS,    /* each sleep and preemption of a Python thread (the default) */
	GPUIO_STACKS_ALL,       /* and each traced call and page fault (--stacks) */
};

struct gpuio_loader_opts {
	bool trace_all;          /* -a */
	bool all_fds;            /* --all-fds */
	bool sockets;            /* IP and unix socket I/O (gpuio trace, unless --no-sockets) */
	__u32 self_tgid;
	size_t ringbuf_bytes;    /* power of two */
	const char *vfs_mode;    /* NULL = best; else forced (e.g. "syscall") */
	bool no_cuda_uprobes;    /* --no-cuda-uprobes: do not load the CUDA API probes */
	bool no_sched;           /* --no-sched: no thread states or wake-ups */
	bool no_faults;          /* --no-faults: no page faults on file mappings */
	bool no_batch;           /* --no-batch: one ring-buffer reservation per call */
	enum gpuio_stacks stacks; /* where Python stacks are taken */
	unsigned int sample_hz;  /* --sample-hz: on-CPU samples a second (0: none) */
	bool no_native;          /* --no-native-frames: Python frames only */
};

struct gpuio_loader {
	struct gpuio_bpf *skel;
	char modes[GPUIO_NLAYERS][16];   /* per header layer (enum gpuio_layer): its mode or "off" */
	char cuda_mode[16];      /* "uprobe.multi", "uprobe" (attached per library later) or "off" */
	char detail[512];        /* why better modes were refused */
	struct bpf_link *links[128];
	int nlinks;
	int reaper_fd;           /* closing it lets the link reaper close the links; -1 none */
	struct bpf_link *fault_iter;     /* the fault layer's end-of-trace iterator, or NULL */
	struct bpf_link *batch_iter;     /* the batched records' end-of-trace iterator, or NULL */
	unsigned int vfs_batch;          /* VFS records per reservation; 0: not batched */
	unsigned long long *traced_bits; /* the BPF side's traced-tgid bitmap, mmapped */
	char load_what[64];              /* "BPF load and attach (N programs, K loads)", -v */
	int loads;                       /* loads of the whole set the ladder took */
};

/* Returns 0 or -errno with a one-line reason already printed. */
int gpuio_loader__open(const struct gpuio_loader_opts *opts, struct gpuio_loader **out);
void gpuio_loader__destroy(struct gpuio_loader *l);

/* The traced set: tgid in (0, or -errno) or out, both the map gpuio iterates
 * and the bitmap the programs test. */
int gpuio_loader__traced_add(struct gpuio_loader *l, unsigned int tgid);
void gpuio_loader__traced_del(struct gpuio_loader *l, unsigned int tgid);
/* Write the attach mode of each layer, and why better ones were refused, into a capture header. */
void gpuio_loader__describe(const struct gpuio_loader *l, struct gpuio_cap_header *h);
/* A header for a trace without BPF: every layer "off", why in the detail. */
void gpuio_loader__describe_off(const char *why, struct gpuio_cap_header *h);
/* "vfs=MODE block=MODE ...": the mode of each header layer, as `gpuio info` prints them. */
void gpuio_loader__modes_text(const struct gpuio_loader *l, char *buf, size_t len);
/* The mode a header layer is tried in first, the best this build has. */
const char *gpuio_loader__best_mode(enum gpuio_layer id);
/*
 * Whether this process can load BPF programs at all (a map is created and
 * closed). 0, or -errno with why filled: not permitted (no CAP_BPF, a
 * seccomp filter, an unprivileged container) or no bpf() (a sandbox kernel).
 */
int gpuio_loader__probe(char *why, size_t len);
/*
 * The end of a trace: settle the page faults still open in traced threads
 * (the fault layer's task iterator), so that the last drain takes them.
 */
void gpuio_loader__flush_faults(struct gpuio_loader *l);
/*
 * The end of a trace: VFS records still waiting in threads' batches
 * (bpf/trace/batch.bpf.h) into the ring, so that the last drain takes them;
 * from here on records are not batched. A batch a thread still holds after
 * two passes is counted as lost.
 */
void gpuio_loader__flush_batches(struct gpuio_loader *l);
/* While tracing (a flight-recorder dump): the records waiting in threads'
 * batches into the ring now; batching goes on. */
void gpuio_loader__send_batches(struct gpuio_loader *l);
/* The sampler's program when its layer loaded (sampler.c attaches it), else NULL. */
struct bpf_program *gpuio_loader__sample_prog(const struct gpuio_loader *l);
/* Say mode for layer id (a layer attached by its module: the sampler's rate). */
void gpuio_loader__set_mode(struct gpuio_loader *l, enum gpuio_layer id, const char *mode);
/* Names of the VFS modes --vfs-mode accepts, for --help and errors. */
const char *gpuio_loader__vfs_modes(void);

#endif

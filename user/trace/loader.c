// SPDX-License-Identifier: MIT
/*
 * loader.c — the attach-mode ladder. Each layer lists its variants best
 * first; a variant is kept when the kernel loads and attaches all of its
 * programs. A refused variant is recorded with the kernel's reason and the
 * next one is tried, so one binary runs on many kernels and says which
 * mode it used and why (gpuio trace -v, and the capture header).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "gpuio.skel.h"
#include "capture/capture.h"
#include "cuda/cuda_lib.h"
#include "trace/loader.h"
#include "trace/link_reaper.h"
#include "trace/mode_probe.h"
#include "lib/log.h"
#include "lib/percpu_btf.h"
#include "lib/units.h"

#include "trace/btf_names.h"
#include "trace/loader_priv.h"

/* Program name of a table entry ("?func:name" -> name). */
static const char *prog_name(const char *entry)
{
	const char *c;

	if (entry[0] != '?' && entry[0] != '@')
		return entry;
	c = strchr(entry, ':');
	return c ? c + 1 : entry + 1;
}

/* An "@tracepoint:prog" entry's tracepoint, into buf (false: not one). */
static bool syscall_tp(const char *entry, char *buf, size_t len)
{
	const char *c = strchr(entry, ':');

	if (entry[0] != '@' || !c || (size_t)(c - entry - 1) >= len)
		return false;
	snprintf(buf, len, "%.*s", (int)(c - entry - 1), entry + 1);
	return true;
}

/* Does syscalls:name exist (an architecture may lack a call: open, creat)? */
static bool tracefs_has_syscall(const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/syscalls/%s", name);
	if (access(path, F_OK) == 0)
		return true;
	snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/syscalls/%s", name);
	return access(path, F_OK) == 0;
}


/* Is an optional entry's kernel function present (in vmlinux BTF)? */
static bool prog_available(const char *entry)
{
	struct btf *vmlinux;
	char func[64];
	const char *c;

	if (entry[0] == '@')
		return syscall_tp(entry, func, sizeof(func)) &&
		       tracefs_has_syscall(func);
	if (entry[0] != '?')
		return true;
	c = strchr(entry, ':');
	if (!c || (size_t)(c - entry - 1) >= sizeof(func))
		return false;
	snprintf(func, sizeof(func), "%.*s", (int)(c - entry - 1), entry + 1);
	vmlinux = btf_names__vmlinux();
	return vmlinux && btf__find_by_name_kind(vmlinux, func, BTF_KIND_FUNC) > 0;
}

/*
 * A program of the chosen variants to load and attach: its kernel function
 * exists, and the socket calls' hooks only where sockets are traced (with
 * --no-sockets they would only return).
 */
static bool prog_wanted(const struct gpuio_loader_opts *o, const char *entry)
{
	char tp[64];

	if (!strncmp(prog_name(entry), "vfs_sock_", 9) && !o->sockets && !o->all_fds)
		return false;
	if (!strcmp(prog_name(entry), "vfs_batch_flush") && o->no_batch)
		return false;
	if (syscall_tp(entry, tp, sizeof(tp)) &&
	    (strstr(tp, "send") || strstr(tp, "recv") || strstr(tp, "connect") ||
	     strstr(tp, "accept")) && !strstr(tp, "sendfile") && !o->sockets && !o->all_fds)
		return false;
	return prog_available(entry);
}

const char *gpuio_loader__vfs_modes(void)
{
	return "fentry, kprobe, per_syscall, syscall";
}

static int nvariants(const struct layer *ly)
{
	int n = 0;

	while (n < (int)ARRAY_SIZE(ly->v) && ly->v[n].mode)
		n++;
	return n;
}

/* libbpf's messages during a load attempt, to learn which program failed. */
static char load_log[16384];
static size_t load_log_len;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	/* keep only libbpf's per-program warnings, not verifier dumps */
	if (level == LIBBPF_WARN && load_log_len < sizeof(load_log) - 1 &&
	    strncmp(fmt, "libbpf: prog '", 14) == 0 && !strstr(fmt, "LOAD LOG")) {
		n = vsnprintf(load_log + load_log_len, sizeof(load_log) - load_log_len, fmt, ap);
		if (n > 0)
			load_log_len += (size_t)n;
		if (load_log_len >= sizeof(load_log))
			load_log_len = sizeof(load_log) - 1;
	}
	/* libbpf's own log is for -vv: -v states the outcome in one line per layer */
	if (gpuio_log_verbosity > GPUIO_LOG_DEBUG)
		vfprintf(stderr, fmt, ap2);
	va_end(ap2);
	return 0;
}

/* Which layer owns program name, or -1. */
static int prog_layer(const char *name, const int *choice)
{
	for (int l = 0; l < L_COUNT; l++) {
		if (choice[l] >= nvariants(&layers[l]))
			continue;
		for (int p = 0; p < MAX_PROGS && layers[l].v[choice[l]].progs[p]; p++)
			if (!strcmp(prog_name(layers[l].v[choice[l]].progs[p]), name))
				return l;
	}
	return -1;
}

/* The first program libbpf blamed in its log, and the reason it gave. */
static int failed_layer(const int *choice, char *why, size_t whylen)
{
	char *line = load_log, *next;

	for (; line && *line; line = next) {
		char name[64], *q, *end, *reason;
		int l;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		/* "libbpf: prog 'NAME': BPF program load failed: REASON" */
		q = strstr(line, "prog '");
		reason = strstr(line, "failed");
		if (!q || !reason)
			continue;
		q += 6;
		end = strchr(q, '\'');
		if (!end || (size_t)(end - q) >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(end - q), q);
		l = prog_layer(name, choice);
		if (l < 0)
			continue;
		reason = strstr(reason, ": ");
		snprintf(why, whylen, "%s: %s", name, reason ? reason + 2 : "load failed");
		return l;
	}
	return -1;
}

/* --vfs-mode takes a family (fentry, kprobe, syscall) or an exact mode. */
static bool vfs_mode_matches(const struct variant *v, const char *forced)
{
	return !strcmp(v->family, forced) || !strcmp(v->mode, forced);
}

static void add_detail(struct gpuio_loader *l, const char *fmt, ...)
{
	size_t used = strlen(l->detail);
	va_list ap;

	if (used >= sizeof(l->detail) - 2)
		return;
	if (used)
		l->detail[used++] = ';', l->detail[used++] = ' ', l->detail[used] = 0;
	va_start(ap, fmt);
	vsnprintf(l->detail + used, sizeof(l->detail) - used, fmt, ap);
	va_end(ap);
}

static int ensure_tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0 ||
	    stat("/sys/kernel/debug/tracing/events", &st) == 0)
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0)
		return -errno;
	pr_debug("mounted tracefs at /sys/kernel/tracing");
	return 0;
}

static void detach_all(struct gpuio_loader *l)
{
	for (int i = 0; i < l->nlinks; i++)
		bpf_link__destroy(l->links[i]);
	l->nlinks = 0;
	l->fault_iter = NULL;
	l->batch_iter = NULL;
	gpuio_bpf__destroy(l->skel);
	l->skel = NULL;
}

/* bpf/trace/common.bpf.h's traced_bits: one bit per tgid up to 2^22 */
#define TRACED_BITS_BYTES ((size_t)(1u << 16) * sizeof(unsigned long long))

/* The mode each layer runs in: its chosen variant's, "off" where none works or it is turned off. */
static void keep_modes(struct gpuio_loader *l, const int *choice)
{
	for (int lay = 0; lay < L_COUNT; lay++) {
		const char *mode = choice[lay] < nvariants(&layers[lay]) ?
				   layers[lay].v[choice[lay]].mode : "off";

		if (layers[lay].hdr >= 0)
			snprintf(l->modes[layers[lay].hdr], sizeof(l->modes[0]), "%s", mode);
		else if (lay == L_CUDA)
			snprintf(l->cuda_mode, sizeof(l->cuda_mode), "%s", mode);
	}
}

/* Stacks ride on the VFS, fault and scheduler programs: on when asked and those loaded. */
static void keep_stack_mode(struct gpuio_loader *l, const struct gpuio_loader_opts *o)
{
	static const char *const mode[] = {
		[GPUIO_STACKS_OFF] = "off", [GPUIO_STACKS_SLEEPS] = "sleeps",
		[GPUIO_STACKS_ALL] = "calls,sleeps",
	};

	snprintf(l->modes[GPUIO_LAYER_STACK], sizeof(l->modes[0]), "%s", mode[o->stacks]);
}

/* Where the run queue and the preempt count lie per CPU: wake-ups from an
 * interrupt then name no waker (bpf/lib/irq_ctx.bpf.h). Asked once. */
static void irq_offsets(struct gpuio_loader *l)
{
	static struct percpu_btf_offs offs;
	static int done;

	if (!done) {
		done = 1;
		if (percpu_btf__offsets(btf_names__vmlinux(), &offs))
			pr_debug("wake-ups from interrupts are not told apart: no per-CPU offsets in BTF");
	}
	l->skel->rodata->irq_rq_off = offs.rq;
	l->skel->rodata->irq_pc_off = offs.preempt;
}

/*
 * Hash maps that no perf_event program touches (the sampler may use only
 * preallocated ones) get their entries as they fill, where the kernel's BPF
 * allocator makes that safe in any context (6.1+: struct bpf_mem_alloc).
 * Preallocated, they were ~15 MB zeroed at every start.
 */
static void lazy_hash_maps(struct gpuio_loader *l)
{
	struct bpf_map *maps[] = { l->skel->maps.traced, l->skel->maps.thread_time,
				   l->skel->maps.fault_counts, l->skel->maps.rqs,
				   l->skel->maps.lost_calls };

	if (btf_names__has("bpf_mem_alloc") != 1)
		return;
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		bpf_map__set_map_flags(maps[i], bpf_map__map_flags(maps[i]) | BPF_F_NO_PREALLOC);
}

/* Open the BPF object and set what its programs read before load (rodata, the ring's size). */
static int open_skel(struct gpuio_loader *l, const struct gpuio_loader_opts *o, const int *choice,
		     char *why, size_t whylen)
{
	struct stat exe;

	l->skel = gpuio_bpf__open();
	if (!l->skel) {
		snprintf(why, whylen, "cannot open BPF object: %s", strerror(errno));
		return -1;
	}
	l->skel->rodata->trace_all = o->trace_all;
	l->skel->rodata->all_fds = o->all_fds;
	l->skel->rodata->trace_sockets = o->sockets;
	l->skel->rodata->self_tgid = o->self_tgid;
	l->skel->rodata->wakeup_bytes = o->ringbuf_bytes / 16;
	l->skel->rodata->shed_above = o->ringbuf_bytes - o->ringbuf_bytes / 4;
	l->skel->rodata->py_stacks = o->stacks == GPUIO_STACKS_ALL;
	l->skel->rodata->py_sleeps = o->stacks != GPUIO_STACKS_OFF;
	l->skel->rodata->py_wanted = o->stacks != GPUIO_STACKS_OFF || o->sample_hz;
	l->skel->rodata->py_native = !o->no_native;
	l->skel->rodata->fault_layer = choice[L_FAULT] < nvariants(&layers[L_FAULT]);
	/* batched VFS records need the switch-out that sends them (batch.bpf.h) */
	l->vfs_batch = choice[L_SCHED] < nvariants(&layers[L_SCHED]) && !o->no_batch ?
		       VFS_BATCH_RECORDS : 0;
	l->skel->rodata->vfs_batch = l->vfs_batch;
	irq_offsets(l);
	/* gpuio's own binary: what a launched command's child faults on before it execs */
	if (stat("/proc/self/exe", &exe) == 0) {
		l->skel->rodata->self_exe_ino = exe.st_ino;
		l->skel->rodata->self_exe_dev = major(exe.st_dev) << 20 | minor(exe.st_dev);
	}
	/* make vmbench's cost breakdown only (bpf/trace/common.bpf.h bench_cut) */
	if (getenv("GPUIO_BENCH_CUT"))
		l->skel->rodata->bench_cut = (__u32)atoi(getenv("GPUIO_BENCH_CUT"));
	bpf_map__set_max_entries(l->skel->maps.events, (__u32)o->ringbuf_bytes);
	lazy_hash_maps(l);
	return 0;
}

/* Load only the chosen variants' programs (all start off). 0, or the failing layer + 1. */
static int mark_autoload(struct gpuio_loader *l, const struct gpuio_loader_opts *o,
			 const int *choice, char *why, size_t whylen)
{
	for (int lay = 0; lay < L_COUNT; lay++) {
		const struct variant *v;

		if (choice[lay] >= nvariants(&layers[lay]))
			continue;          /* optional layer turned off */
		v = &layers[lay].v[choice[lay]];
		if (v->needs_tracefs && ensure_tracefs() < 0) {
			snprintf(why, whylen, "tracefs not mounted and cannot be mounted");
			return lay + 1;
		}
		for (int p = 0; p < MAX_PROGS && v->progs[p]; p++) {
			struct bpf_program *prog;

			if (!prog_wanted(o, v->progs[p]))
				continue;
			prog = bpf_object__find_program_by_name(l->skel->obj, prog_name(v->progs[p]));
			if (!prog) {
				snprintf(why, whylen, "program %s missing from this build",
					 prog_name(v->progs[p]));
				return lay + 1;
			}
			bpf_program__set_autoload(prog, true);
			if (v->expected_attach)
				bpf_program__set_expected_attach_type(prog, v->expected_attach);
		}
	}
	return 0;
}

/*
 * Load the marked programs. 0, the layer + 1 of the program the verifier
 * refused (from libbpf's log), or -1 when no layer can be blamed.
 */
static int load_progs(struct gpuio_loader *l, const int *choice, char *why, size_t whylen)
{
	int err, lay;

	load_log_len = 0;
	load_log[0] = 0;
	l->loads++;
	err = gpuio_bpf__load(l->skel);
	if (!err)
		return 0;
	if (gpuio_log_verbosity > GPUIO_LOG_DEBUG)
		pr_debug("load attempt failed; libbpf said: %s", load_log);
	lay = failed_layer(choice, why, whylen);
	if (lay < 0) {
		snprintf(why, whylen, "BPF load failed: %s", strerror(-err));
		return -1;
	}
	return lay + 1;
}

/* Attach the loaded programs of every layer but those attached by their module. */
static int attach_layers(struct gpuio_loader *l, const struct gpuio_loader_opts *o,
			 const int *choice, char *why, size_t whylen)
{
	char tp[64];

	for (int lay = 0; lay < L_COUNT; lay++) {
		const struct variant *v;

		if (choice[lay] >= nvariants(&layers[lay]) || layers[lay].manual)
			continue;
		v = &layers[lay].v[choice[lay]];
		for (int p = 0; p < MAX_PROGS && v->progs[p]; p++) {
			struct bpf_program *prog;
			struct bpf_link *link;

			if (!prog_wanted(o, v->progs[p]))
				continue;
			prog = bpf_object__find_program_by_name(l->skel->obj, prog_name(v->progs[p]));
			if (syscall_tp(v->progs[p], tp, sizeof(tp)))
				link = bpf_program__attach_tracepoint(prog, "syscalls", tp);
			else
				link = bpf_program__attach(prog);
			if (!link) {
				snprintf(why, whylen, "attach %s: %s", prog_name(v->progs[p]),
					 strerror(errno));
				return lay + 1;
			}
			if (l->nlinks < (int)ARRAY_SIZE(l->links))
				l->links[l->nlinks++] = link;
			if (prog == l->skel->progs.fault_flush)
				l->fault_iter = link;
			if (prog == l->skel->progs.vfs_batch_flush)
				l->batch_iter = link;
		}
	}
	return 0;
}

/*
 * Does every tp_btf program of the chosen variants have its tracepoint in
 * this kernel (a btf_trace_NAME type)? A tracepoint newer than the kernel
 * (io_uring_submit_req 6.3, the filemap fault events 6.11) is then refused
 * by name, before any program is loaded: on a stock 6.1 kernel the ladder
 * took 5 loads of the whole set. 0, or the layer + 1 with why.
 */
static int check_tracepoints(struct gpuio_loader *l, const struct gpuio_loader_opts *o,
			     const int *choice, char *why, size_t whylen)
{
	char ty[96];

	for (int lay = 0; lay < L_COUNT; lay++) {
		const struct variant *v;

		if (choice[lay] >= nvariants(&layers[lay]))
			continue;
		v = &layers[lay].v[choice[lay]];
		for (int p = 0; p < MAX_PROGS && v->progs[p]; p++) {
			struct bpf_program *prog;
			const char *sec;

			if (!prog_wanted(o, v->progs[p]) ||
			    !(prog = bpf_object__find_program_by_name(l->skel->obj,
								      prog_name(v->progs[p]))))
				continue;
			sec = bpf_program__section_name(prog);
			sec += sec[0] == '?';
			if (strncmp(sec, "tp_btf/", 7))
				continue;
			snprintf(ty, sizeof(ty), "btf_trace_%s", sec + 7);
			if (btf_names__has(ty) == 0) {
				snprintf(why, whylen, "%s: no tracepoint %s in this kernel",
					 prog_name(v->progs[p]), sec + 7);
				return lay + 1;
			}
		}
	}
	return 0;
}

/* One attempt with the current choices. Returns 0, or the failing layer + 1 (-1: none). */
static int try_load_unlocked(struct gpuio_loader *l, const struct gpuio_loader_opts *o, int *choice,
			     char *why, size_t whylen)
{
	int rc;

	if (open_skel(l, o, choice, why, whylen) < 0)
		return -1;
	rc = check_tracepoints(l, o, choice, why, whylen);
	if (!rc)
		rc = mark_autoload(l, o, choice, why, whylen);
	if (!rc)
		rc = load_progs(l, choice, why, whylen);
	if (rc)
		return rc;
	/* uprobe.multi loads on kernels that cannot link it: ask for a link */
	if (choice[L_CUDA] < nvariants(&layers[L_CUDA]) &&
	    layers[L_CUDA].v[choice[L_CUDA]].expected_attach &&
	    cuda_uprobe_multi_probe(bpf_program__fd(l->skel->progs.cuda_multi_entry), why, whylen))
		return L_CUDA + 1;
	return attach_layers(l, o, choice, why, whylen);
}

/* The same, while no link reaper closes a link (they would take turns with
 * every attach: seconds, after another gpuio has just ended). */
static int try_load(struct gpuio_loader *l, const struct gpuio_loader_opts *o, int *choice,
		    char *why, size_t whylen)
{
	int lk = link_reaper__lock();
	int rc = try_load_unlocked(l, o, choice, why, whylen);

	link_reaper__unlock(lk);
	return rc;
}

/* Where each layer's ladder starts: layers turned off by option, the tests' forced flavours. */
static void first_choices(const struct gpuio_loader_opts *o, int *choice)
{
	if (o->no_sched)
		choice[L_SCHED] = nvariants(&layers[L_SCHED]);
	if (!o->sample_hz)
		choice[L_SAMPLE] = nvariants(&layers[L_SAMPLE]);
	if (o->no_faults) {
		choice[L_FAULT] = nvariants(&layers[L_FAULT]);
	} else if (getenv("GPUIO_FAULT_MODE")) {
		/* tests and bench: the older kernels' lookup at entry on a new kernel */
		while (choice[L_FAULT] < nvariants(&layers[L_FAULT]) &&
		       strcmp(layers[L_FAULT].v[choice[L_FAULT]].mode, getenv("GPUIO_FAULT_MODE")))
			choice[L_FAULT]++;
	}
	if (o->no_cuda_uprobes) {
		choice[L_CUDA] = nvariants(&layers[L_CUDA]);
	} else if (getenv("GPUIO_CUDA_UPROBE_MODE")) {
		/* tests: exercise the older kernels' flavour on a new kernel */
		while (choice[L_CUDA] < nvariants(&layers[L_CUDA]) &&
		       strcmp(layers[L_CUDA].v[choice[L_CUDA]].mode, getenv("GPUIO_CUDA_UPROBE_MODE")))
			choice[L_CUDA]++;
	}
}

/* --vfs-mode: start the VFS ladder at the first variant it names. 0 or -EINVAL (said). */
static int force_vfs_mode(const struct gpuio_loader_opts *o, int *choice)
{
	if (!o->vfs_mode)
		return 0;
	for (int i = 0; i < nvariants(&layers[L_VFS]); i++) {
		if (vfs_mode_matches(&layers[L_VFS].v[i], o->vfs_mode)) {
			choice[L_VFS] = i;
			return 0;
		}
	}
	pr_err("unknown --vfs-mode '%s' (one of: %s)", o->vfs_mode, gpuio_loader__vfs_modes());
	return -EINVAL;
}

/*
 * Layer lay's variant was refused for why: note it, step down to its next
 * variant (a forced VFS mode only to its own family; an optional layer past
 * its last one is off). 0, or -EPERM with the reason said.
 */
static int step_down(struct gpuio_loader *l, const struct gpuio_loader_opts *o, int *choice,
		     int lay, const char *why)
{
	add_detail(l, "%s %s refused: %s", layers[lay].name, layers[lay].v[choice[lay]].mode, why);
	pr_debug("%s mode %s refused: %s", layers[lay].name, layers[lay].v[choice[lay]].mode, why);
	choice[lay]++;
	/* a forced VFS mode must not silently fall to another one */
	while (lay == L_VFS && o->vfs_mode && choice[lay] < nvariants(&layers[lay]) &&
	       !vfs_mode_matches(&layers[lay].v[choice[lay]], o->vfs_mode))
		choice[lay]++;
	if (choice[lay] >= nvariants(&layers[lay]) && !layers[lay].optional) {
		if (lay == L_VFS && o->vfs_mode)
			pr_err("--vfs-mode=%s is not available on this kernel: %s "
			       "(omit --vfs-mode to use the best mode that works)", o->vfs_mode, why);
		else
			pr_err("cannot trace the %s layer on this kernel: %s", layers[lay].name, why);
		return -EPERM;
	}
	if (choice[lay] >= nvariants(&layers[lay]))
		pr_warn("%s layer off: no attach mode works here (%s)", layers[lay].name, why);
	return 0;
}

/* The per-syscall modes need the syscall tracepoints (CONFIG_FTRACE_SYSCALLS)
 * and, but for sys:each:probe, bpf_rdonly_cast (6.2+): known without a load.
 * Whether refused, with why. */
static bool per_syscall_refused(const struct variant *v, char *why, size_t whylen)
{
	struct stat st;

	if (ensure_tracefs() < 0) {
		snprintf(why, whylen, "tracefs not mounted and cannot be mounted");
		return true;
	}
	if (stat("/sys/kernel/tracing/events/syscalls/sys_enter_read", &st) != 0 &&
	    stat("/sys/kernel/debug/tracing/events/syscalls/sys_enter_read", &st) != 0) {
		snprintf(why, whylen, "no syscall tracepoints (a kernel without CONFIG_FTRACE_SYSCALLS)");
		return true;
	}
	if (!strcmp(v->mode, "sys:each") && btf_names__has("bpf_rdonly_cast") == 0) {
		snprintf(why, whylen, "no bpf_rdonly_cast in this kernel (6.2+)");
		return true;
	}
	return false;
}

/*
 * The modes the kernel may lack, asked with an empty program each
 * (mode_probe.c, ~1 ms) before the whole set is loaded in one of them: the
 * VFS ladder's function hooks (a kernel without trampolines or kprobes
 * refused them only after ~300 ms of verifying every layer's programs, once
 * per mode) and the CUDA layer's uprobe.multi links (6.6+); the per-syscall
 * modes by what tracefs and the BTF hold. The ladder still steps down if the
 * whole set is refused where a probe passed.
 */
static int probe_modes(struct gpuio_loader *l, const struct gpuio_loader_opts *o, int *choice)
{
	char why[256];

	/* make bench's start row: the ladder alone, as before the probe */
	if (getenv("GPUIO_BENCH_NO_MODE_PROBE"))
		return 0;
	while (choice[L_VFS] < nvariants(&layers[L_VFS])) {
		const char *fam = layers[L_VFS].v[choice[L_VFS]].family;
		int kind = !strcmp(fam, "fentry") ? MODE_PROBE_FENTRY :
			   !strcmp(fam, "kprobe") ? MODE_PROBE_KPROBE : -1;

		if (!strcmp(fam, "per_syscall")) {
			if (!per_syscall_refused(&layers[L_VFS].v[choice[L_VFS]], why, sizeof(why)))
				break;
		} else if (kind < 0 || mode_probe(kind, why, sizeof(why)) == 0) {
			break;
		}
		if (step_down(l, o, choice, L_VFS, why) < 0)
			return -EPERM;
	}
	if (choice[L_CUDA] < nvariants(&layers[L_CUDA]) &&
	    layers[L_CUDA].v[choice[L_CUDA]].expected_attach &&
	    mode_probe(MODE_PROBE_UPROBE_MULTI, why, sizeof(why)) != 0)
		return step_down(l, o, choice, L_CUDA, why);
	return 0;
}

/*
 * The ladder: try the choices; on a refusal note why, step the refused layer
 * down to its next variant (an optional layer past its last one is off) and
 * try again. 0, or -EPERM with the reason said.
 */
static int climb(struct gpuio_loader *l, const struct gpuio_loader_opts *o, int *choice)
{
	char why[256];

	for (int attempt = 0; attempt < 16; attempt++) {
		int rc;

		why[0] = 0;
		rc = try_load(l, o, choice, why, sizeof(why));
		if (rc == 0) {
			struct bpf_program *p;
			int n = 0;

			bpf_object__for_each_program(p, l->skel->obj)
				n += bpf_program__autoload(p);
			snprintf(l->load_what, sizeof(l->load_what), "BPF load and attach "
				 "(%d programs, %d %s)", n, l->loads, l->loads > 1 ? "loads" : "load");
			return 0;
		}
		detach_all(l);
		if (rc < 0) {
			pr_err("%s", why);
			return -EPERM;
		}
		if (step_down(l, o, choice, rc - 1, why) < 0)
			return -EPERM;
	}
	pr_err("could not load gpuio's BPF programs after several attempts");
	return -EPERM;
}

int gpuio_loader__open(const struct gpuio_loader_opts *o, struct gpuio_loader **out)
{
	static struct gpuio_loader loader;
	struct gpuio_loader *l = &loader;
	int choice[L_COUNT] = { 0 };
	int err;

	memset(l, 0, sizeof(*l));
	l->reaper_fd = -1;
	libbpf_set_print(libbpf_print);
	first_choices(o, choice);
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): gpuio needs a kernel "
		       "built with CONFIG_DEBUG_INFO_BTF=y (all major distributions since 2021 ship one)");
		return -ENOTSUP;
	}
	err = force_vfs_mode(o, choice);
	if (!err)
		err = probe_modes(l, o, choice);
	if (!err)
		err = climb(l, o, choice);
	if (err)
		return err;
	keep_modes(l, choice);
	keep_stack_mode(l, o);
	if (!l->detail[0])
		snprintf(l->detail, sizeof(l->detail), "best mode of every layer accepted");
	/* the programs' traced-tgid bitmap: set and cleared here with atomics */
	l->traced_bits = mmap(NULL, TRACED_BITS_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
			      bpf_map__fd(l->skel->maps.traced_bits), 0);
	if (l->traced_bits == MAP_FAILED) {
		pr_err("cannot map the traced set: %s", strerror(errno));
		l->traced_bits = NULL;
		detach_all(l);
		return -EPERM;
	}
	/* many tracepoint links (the per-syscall mode): a child holds them from
	 * now on and closes them after gpuio's end, however it ends, having
	 * first set tracing_over (a gpuio killed by SIGKILL sets nothing) */
	if (!getenv("GPUIO_SYNC_DETACH"))
		l->reaper_fd = link_reaper__arm(l->links, l->nlinks, 16,
						bpf_map__fd(l->skel->maps.bss),
						offsetof(struct gpuio_bpf__bss, tracing_over));
	*out = l;
	return 0;
}

int gpuio_loader__traced_add(struct gpuio_loader *l, unsigned int tgid)
{
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.traced), &tgid, &one, BPF_ANY) != 0)
		return -errno;
	if (l->traced_bits && tgid < (1u << 22))
		__atomic_fetch_or(&l->traced_bits[tgid >> 6], 1ull << (tgid & 63), __ATOMIC_SEQ_CST);
	return 0;
}

void gpuio_loader__traced_del(struct gpuio_loader *l, unsigned int tgid)
{
	if (l->traced_bits && tgid < (1u << 22))
		__atomic_fetch_and(&l->traced_bits[tgid >> 6], ~(1ull << (tgid & 63)), __ATOMIC_SEQ_CST);
	bpf_map_delete_elem(bpf_map__fd(l->skel->maps.traced), &tgid);
}

void gpuio_loader__destroy(struct gpuio_loader *l)
{
	if (!l)
		return;
	if (l->traced_bits)
		munmap(l->traced_bits, TRACED_BITS_BYTES);
	l->traced_bits = NULL;
	/* links the reaper holds outlive this: their programs trace no one now */
	if (l->skel && l->skel->bss)
		__atomic_store_n(&l->skel->bss->tracing_over, true, __ATOMIC_SEQ_CST);
	/* many tracepoint links (the per-syscall mode): a child closes them */
	if (l->reaper_fd < 0 && l->nlinks >= 16 && !getenv("GPUIO_SYNC_DETACH"))
		link_reaper__take(l->links, l->nlinks);
	detach_all(l);
	/* only now, with gpuio's own references gone, may the child close: a
	 * close of its would not be the last, and gpuio's would wait */
	if (l->reaper_fd >= 0) {
		close(l->reaper_fd);
		l->reaper_fd = -1;
	}
}

struct bpf_program *gpuio_loader__sample_prog(const struct gpuio_loader *l)
{
	return strcmp(l->modes[GPUIO_LAYER_SAMPLE], "off") ? l->skel->progs.py_sample : NULL;
}

void gpuio_loader__set_mode(struct gpuio_loader *l, enum gpuio_layer id, const char *mode)
{
	snprintf(l->modes[id], sizeof(l->modes[0]), "%s", mode);
}

const char *gpuio_loader__best_mode(enum gpuio_layer id)
{
	for (int lay = 0; lay < L_COUNT; lay++)
		if (layers[lay].hdr == (int)id)
			return layers[lay].v[0].mode;
	return "";
}

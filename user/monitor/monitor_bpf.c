// SPDX-License-Identifier: MIT
/*
 * monitor_bpf.c — bpf/monitor/monitor.bpf.c's loader: every program exists as a
 * tp_btf and a raw_tp variant (SEC("?…"), off by default); the tp_btf set is
 * tried first, then raw_tp, and the mode kept is said out loud.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "monitor.skel.h"
#include "monitor/monitor_bpf.h"
#include "trace/btf_names.h"
#include "lib/log.h"
#include "lib/percpu_btf.h"
#include "lib/units.h"

static const char *const progs[] = {
	"mon_sys_enter", "mon_sys_exit", "mon_bio_queue", "mon_rq_insert", "mon_rq_issue",
	"mon_rq_complete", "mon_cache_add", "mon_dirty", "mon_exit", "mon_exec",
	"mon_switch", "mon_waking",      /* last: thread time (--no-thread-time leaves them out) */
};
#define NSCHED 2
#define NPROGS (ARRAY_SIZE(progs))

/* Does io_uring_complete pass the cqe (6.3+: ctx, req, cqe) rather than its fields? */
static bool uring_complete_has_cqe(void)
{
	const struct btf *btf = btf_names__vmlinux();
	const struct btf_type *t;
	bool cqe = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "btf_trace_io_uring_complete", BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	t = t ? btf__type_by_id(btf, t->type) : NULL;            /* the pointer */
	t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	if (t && btf_is_func_proto(t))
		cqe = btf_vlen(t) == 4;                         /* __data, ctx, req, cqe */
	return cqe;
}

/*
 * io_uring's programs for this kernel (its file reads and writes pass no
 * syscall the monitor counts): the submit tracepoint it has and the
 * completion's signature; none where it has no io_uring tracepoints. Asked
 * once: the variants share the answer.
 */
static void uring_progs(const char **submit, const char **complete)
{
	static int done;
	static const char *s, *c;

	if (!done) {
		done = 1;
		if (btf_names__has("btf_trace_io_uring_submit_req") == 1)
			s = "mon_uring_submit";
		else if (btf_names__has("btf_trace_io_uring_submit_sqe") == 1)
			s = "mon_uring_submit_sqe";
		if (s && btf_names__has("btf_trace_io_uring_complete") == 1)
			c = uring_complete_has_cqe() ? "mon_uring_complete_cqe" :
						       "mon_uring_complete_args";
		else
			s = NULL;
	}
	*submit = s;
	*complete = c;
}

/* Where the run queue and the preempt count lie per CPU: interrupts' wake-ups
 * are then no producer's (bpf/lib/irq_ctx.bpf.h). Asked once. */
static void irq_offsets(struct monitor_loader *m)
{
	static struct percpu_btf_offs offs;
	static int done, err;

	if (!done) {
		done = 1;
		err = percpu_btf__offsets(btf_names__vmlinux(), &offs);
	}
	m->irq_known = !err;
	m->skel->rodata->irq_rq_off = offs.rq;
	m->skel->rodata->irq_pc_off = offs.preempt;
}

static void detach(struct monitor_loader *m)
{
	bpf_link__destroy(m->iter);
	m->iter = NULL;
	for (int i = 0; i < m->nlinks; i++)
		bpf_link__destroy(m->links[i]);
	m->nlinks = 0;
	monitor_bpf__destroy(m->skel);
	m->skel = NULL;
}

/* One attempt with every program in variant suffix ("btf" or "raw"). */
static int try_variant(struct monitor_loader *m, const struct monitor_loader_opts *o,
		       const char *suffix, bool void_cast, char *why, size_t whylen)
{
	size_t nprogs = o->no_thread_time ? NPROGS - NSCHED : NPROGS;
	const char *uring[2];
	char name[64];
	int err;

	m->skel = monitor_bpf__open();
	if (!m->skel) {
		snprintf(why, whylen, "cannot open the BPF object: %s", strerror(errno));
		return -errno;
	}
	m->skel->rodata->void_cast = void_cast;
	m->skel->rodata->mon_cg_ssid = o->cg_ssid;
	m->skel->rodata->sched_on = !o->no_thread_time;
	m->skel->rodata->lat_on = !o->no_latency;
	irq_offsets(m);
	m->no_latency = o->no_latency;
	bpf_map__set_max_entries(m->skel->maps.mon_sched_proc, o->max_procs);
	bpf_map__set_max_entries(m->skel->maps.mon_cg, o->max_cgroups);
	bpf_map__set_max_entries(m->skel->maps.mon_proc, o->max_procs);
	bpf_map__set_max_entries(m->skel->maps.mon_exited, o->max_procs);
	bpf_map__set_max_entries(m->skel->maps.mon_dev, o->max_devs);
	bpf_map__set_max_entries(m->skel->maps.mon_rqs, o->max_rqs);
	bpf_map__set_max_entries(m->skel->maps.mon_bios, o->max_rqs);
	for (size_t i = 0; i < nprogs; i++) {
		struct bpf_program *p;

		snprintf(name, sizeof(name), "%s_%s", progs[i], suffix);
		p = bpf_object__find_program_by_name(m->skel->obj, name);
		if (!p) {
			snprintf(why, whylen, "program %s missing from this build", name);
			return -ENOENT;
		}
		bpf_program__set_autoload(p, true);
	}
	uring_progs(&uring[0], &uring[1]);
	for (int i = 0; i < 2 && uring[0]; i++) {
		struct bpf_program *p;

		snprintf(name, sizeof(name), "%s_%s", uring[i], suffix);
		p = bpf_object__find_program_by_name(m->skel->obj, name);
		if (p)
			bpf_program__set_autoload(p, true);
	}
	/* tp_btf: threads accumulate in task storage; the daemon runs the task
	 * iterator before each refresh to fold them (bpf/monitor/monitor.bpf.c) */
	if (!strcmp(suffix, "btf"))
		bpf_program__set_autoload(m->skel->progs.mon_iter_task, true);
	err = monitor_bpf__load(m->skel);
	if (err) {
		snprintf(why, whylen, "%s programs refused by the kernel: %s", suffix, strerror(-err));
		return err;
	}
	for (size_t i = 0; i < nprogs; i++) {
		struct bpf_program *p;
		struct bpf_link *link;

		snprintf(name, sizeof(name), "%s_%s", progs[i], suffix);
		p = bpf_object__find_program_by_name(m->skel->obj, name);
		link = bpf_program__attach(p);
		if (!link) {
			err = -errno;
			snprintf(why, whylen, "attach %s: %s", name, strerror(errno));
			return err;
		}
		m->links[m->nlinks++] = link;
	}
	for (int i = 0; i < 2 && uring[0]; i++) {
		struct bpf_program *p;
		struct bpf_link *link;

		snprintf(name, sizeof(name), "%s_%s", uring[i], suffix);
		p = bpf_object__find_program_by_name(m->skel->obj, name);
		if (!p || !(link = bpf_program__attach(p))) {
			err = -errno;
			snprintf(why, whylen, "attach %s: %s", name, strerror(errno));
			return err ? err : -ENOENT;
		}
		m->links[m->nlinks++] = link;
	}
	if (!strcmp(suffix, "btf")) {
		m->iter = bpf_program__attach_iter(m->skel->progs.mon_iter_task, NULL);
		if (!m->iter) {
			err = -errno;
			snprintf(why, whylen, "attach mon_iter_task: %s", strerror(errno));
			return err;
		}
	}
	return 0;
}

int monitor_loader__open(const struct monitor_loader_opts *o, struct monitor_loader **out)
{
	/* tp_btf with the void-cast fd lookup, tp_btf with probe_read, raw_tp */
	static const struct { const char *suffix, *mode; bool void_cast; } variants[] = {
		{ "btf", "tp_btf", true }, { "btf", "tp_btf", false }, { "raw", "raw_tp", false },
	};
	struct monitor_loader *m = calloc(1, sizeof(*m));
	char why[256] = "";
	int err = -EPERM;

	if (!m)
		return -ENOMEM;
	/* GPUIO_MONITOR_MODE=raw_tp or tp_btf-probe-read: start at that
	 * fallback (to measure it) */
	const char *force = getenv("GPUIO_MONITOR_MODE");
	int v0 = !force ? 0 : !strcmp(force, "raw_tp") ? 2 : !strcmp(force, "tp_btf-probe-read") ? 1 : 0;

	for (int v = v0; v < 3; v++) {
		err = try_variant(m, o, variants[v].suffix, variants[v].void_cast, why, sizeof(why));
		if (!err) {
			snprintf(m->mode, sizeof(m->mode), "%s", variants[v].mode);
			break;
		}
		detach(m);
		if (v == 1)
			snprintf(m->detail, sizeof(m->detail), "tp_btf refused: %s", why);
		pr_debug("monitor: %s", why);
	}
	if (err) {
		pr_err("cannot load the monitor's BPF programs: %s", why);
		free(m);
		return err;
	}
	m->fd_cg = bpf_map__fd(m->skel->maps.mon_cg);
	m->fd_proc = bpf_map__fd(m->skel->maps.mon_proc);
	m->fd_dev = bpf_map__fd(m->skel->maps.mon_dev);
	m->fd_exited = bpf_map__fd(m->skel->maps.mon_exited);
	m->fd_stats = bpf_map__fd(m->skel->maps.mon_stats);
	m->fd_sched = o->no_thread_time ? -1 : bpf_map__fd(m->skel->maps.mon_sched_proc);
	m->max_cgroups = o->max_cgroups;
	m->max_procs = o->max_procs;
	m->max_exited = o->max_procs;
	m->max_devs = o->max_devs;
	m->max_rqs = o->max_rqs;
	*out = m;
	return 0;
}

/* Fold every thread's pending counts into the maps (tp_btf variant). */
void monitor_loader__flush(struct monitor_loader *m)
{
	char buf[64];
	int fd;

	if (!m->iter)
		return;
	fd = bpf_iter_create(bpf_link__fd(m->iter));
	if (fd < 0) {
		pr_debug("monitor: task iterator: %s", strerror(errno));
		return;
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

void monitor_loader__destroy(struct monitor_loader *m)
{
	if (!m)
		return;
	detach(m);
	free(m);
}

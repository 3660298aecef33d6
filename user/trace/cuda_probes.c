// SPDX-License-Identifier: MIT
/*
 * cuda_probes.c — CUDA API uprobes per library file (cuda_probes.h): find
 * the functions of cuda/cuda_lib.c's tables in a library, attach the generic
 * entry/return programs with uprobe.multi (classic uprobes where the kernel
 * lacks it) for each traced process, follow the libraries they map, drop a
 * process's probes when CUPTI gives its calls or when it exits.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
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
#include "trace/cuda_probes.h"
#include "bpf/trace/cuda_spec.h"
#include "lib/keyset.h"
#include "trace/loader.h"
#include "lib/log.h"
#include "trace/cuda_probes_priv.h"
#include "lib/proc_maps.h"
#include "lib/units.h"

#define MAX_LIB_LINKS 1024

/*
 * One library file attached for one process (pid -1: every process): its
 * uprobe.multi link fds or classic links. A file whose attach failed is
 * kept with none, so it is not retried every second.
 */
struct lib_attach {
	pid_t pid;
	dev_t dev;
	ino_t ino;
	int fds[2];                         /* uprobe.multi entry, return (-1: none) */
	struct bpf_link **links;            /* classic: entry and return per function */
	int nlinks;
	int nfuncs;
};

struct cuda_probes {
	struct gpuio_bpf *skel;
	bool multi;                         /* uprobe.multi links (one per library and direction) */
	int specs_fd;
	char slot_name[CUDA_SPEC_MAX][48];  /* names of the filled cuda_specs slots */
	int nslots;
	struct lib_attach *att;             /* attached (pid, file) pairs */
	int natt, cap_att;
	struct keyset *no_probe;            /* pids whose CUDA calls come from CUPTI */
	bool every_process;                 /* -a: attach once per file for every process */
	int nlibs, nfuncs;
};

int cuda_probes__new(struct gpuio_loader *l, bool every_process, struct cuda_probes **out)
{
	struct cuda_probes *cp;

	if (!strcmp(l->cuda_mode, "off"))
		return -ENOTSUP;
	cp = calloc(1, sizeof(*cp));
	if (!cp)
		return -ENOMEM;
	cp->skel = l->skel;
	cp->multi = !strcmp(l->cuda_mode, "uprobe.multi");
	cp->every_process = every_process;
	cp->specs_fd = bpf_map__fd(l->skel->maps.cuda_specs);
	cp->no_probe = keyset__new(8);
	if (!cp->no_probe) {
		cuda_probes__free(cp);
		return -ENOMEM;
	}
	cuda_elf_init();
	*out = cp;
	return 0;
}

static void opnd_set(struct cuda_operand *o, const struct cuda_opnd *t)
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


static int add_link(struct lib_attach *a, struct bpf_link *link)
{
	struct bpf_link **n = realloc(a->links, (a->nlinks + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	a->links = n;
	a->links[a->nlinks++] = link;
	return 0;
}

static int attach_one(struct cuda_probes *cp, struct lib_attach *a, const char *path, size_t off,
		      int slot)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = (__u64)slot);
	struct bpf_link *entry, *ret;
	int err;

	uo.retprobe = false;
	entry = bpf_program__attach_uprobe_opts(cp->skel->progs.cuda_api_entry, a->pid, path, off, &uo);
	if (!entry)
		return -errno;
	uo.retprobe = true;
	ret = bpf_program__attach_uprobe_opts(cp->skel->progs.cuda_api_return, a->pid, path, off, &uo);
	if (!ret) {
		err = -errno;
		bpf_link__destroy(entry);
		return err;
	}
	if (add_link(a, entry) || add_link(a, ret)) {
		bpf_link__destroy(entry);
		bpf_link__destroy(ret);
		return -ENOMEM;
	}
	return 0;
}

/* All of a library's probes in two links (entry, return). */
static int attach_multi(struct cuda_probes *cp, struct lib_attach *a, const char *path,
			const unsigned long *offs, const __u64 *cookies, int n)
{
	int efd, rfd;

	efd = cuda_uprobe_multi_link(bpf_program__fd(cp->skel->progs.cuda_multi_entry), path, offs,
				     cookies, n, false, a->pid);
	if (efd < 0)
		return efd;
	rfd = cuda_uprobe_multi_link(bpf_program__fd(cp->skel->progs.cuda_multi_return), path, offs,
				     cookies, n, true, a->pid);
	if (rfd < 0) {
		close(efd);
		return rfd;
	}
	a->fds[0] = efd;
	a->fds[1] = rfd;
	return 0;
}

static struct lib_attach *find_attach(struct cuda_probes *cp, pid_t pid, dev_t dev, ino_t ino)
{
	for (int i = 0; i < cp->natt; i++)
		if (cp->att[i].pid == pid && cp->att[i].dev == dev && cp->att[i].ino == ino)
			return &cp->att[i];
	return NULL;
}

static struct lib_attach *new_attach(struct cuda_probes *cp, pid_t pid, dev_t dev, ino_t ino)
{
	struct lib_attach *a;

	if (cp->natt == cp->cap_att) {
		int cap = cp->cap_att ? cp->cap_att * 2 : 16;
		struct lib_attach *n = realloc(cp->att, cap * sizeof(*n));

		if (!n)
			return NULL;
		cp->att = n;
		cp->cap_att = cap;
	}
	a = &cp->att[cp->natt++];
	*a = (struct lib_attach){ .pid = pid, .dev = dev, .ino = ino, .fds = { -1, -1 } };
	return a;
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
	struct lib_attach *a;
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
	/* one attach per (process, file), whatever path it was found through */
	if (find_attach(cp, pid, st.st_dev, st.st_ino))
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
	a = new_attach(cp, pid, st.st_dev, st.st_ino);
	if (!a) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (cp->multi && seen->nprobe) {
		err = attach_multi(cp, a, path, seen->offs, seen->cookies, seen->nprobe);
		if (err) {
			first_err = err;
			failed += seen->nprobe;
		} else {
			n = seen->nprobe;
		}
	}
	for (int i = 0; !cp->multi && i < seen->nprobe; i++) {
		err = attach_one(cp, a, path, seen->offs[i], (int)seen->cookies[i]);
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
	a->nfuncs = n;
	if (n) {
		cp->nlibs++;
		cp->nfuncs += n;
	}
	if (failed)
		pr_warn("cuda uprobes: %d functions of %s not probed (%s)", failed, path,
			first_err ? strerror(-first_err) : "too many names");
	if (pid > 0)
		pr_info("cuda uprobes: %s: %d functions, for pid %d", path, n, pid);
	else
		pr_info("cuda uprobes: %s: %d functions, every process", path, n);
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
	char full[PATH_MAX + 32];
	struct proc_maps it;
	struct proc_map m;
	int found = 0, kind;

	if (proc_maps__open(&it, pid))
		return -ESRCH;
	while (proc_maps__next(&it, &m) > 0) {
		if (!proc_map__is_file(&m))
			continue;
		kind = cuda_lib_kind(m.path);
		if (!kind || strstr(m.path, " (deleted)"))
			continue;
		found |= kind;
		if (!cp || keyset__contains(cp->no_probe, (__u64)pid, 0))
			continue;
		/* the path is the process's view: go through its root (containers) */
		snprintf(full, sizeof(full), "/proc/%d/root%s", pid, m.path);
		cuda_probes__attach_lib(cp, full, kind, cp->every_process ? -1 : pid);
	}
	proc_maps__close(&it);
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

int cuda_probes__attach_for_exec(struct cuda_probes *cp, const char *exe, pid_t pid)
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
				 nneeded < (int)ARRAY_SIZE(needed))
				needed[nneeded++] = strdup(s);
		}
	}
	for (int i = 0; i < nneeded; i++) {
		if (needed[i] && find_lib(needed[i], rpath, runpath, origin, lib, sizeof(lib)) &&
		    cuda_probes__attach_lib(cp, lib, 0, cp->every_process ? -1 : pid) > 0)
			nlibs++;
		free(needed[i]);
	}
	/* libcudart dlopens the driver by this name (and so do most frameworks) */
	if (find_lib("libcuda.so.1", rpath, runpath, origin, lib, sizeof(lib)) &&
	    cuda_probes__attach_lib(cp, lib, CUDA_LIB_DRV, cp->every_process ? -1 : pid) > 0)
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

/* Undo one attachment (links destroyed in parallel: see destroy_links). */
static void release(struct lib_attach *a)
{
	destroy_links(a->links, a->nlinks);
	free(a->links);
	for (int i = 0; i < 2; i++)
		if (a->fds[i] >= 0)
			close(a->fds[i]);
}

/* Remove every attachment of pid. Returns how many were removed. */
static int drop_pid(struct cuda_probes *cp, pid_t pid)
{
	int n = 0, j = 0;

	for (int i = 0; i < cp->natt; i++) {
		if (cp->att[i].pid == pid) {
			cp->nfuncs -= cp->att[i].nfuncs;
			cp->nlibs -= cp->att[i].nfuncs > 0;
			release(&cp->att[i]);
			n++;
			continue;
		}
		cp->att[j++] = cp->att[i];
	}
	cp->natt = j;
	return n;
}

int cuda_probes__detach_pid(struct cuda_probes *cp, pid_t pid)
{
	if (!cp || pid <= 0)
		return 0;
	keyset__test_and_add(cp->no_probe, (__u64)pid, 0);
	return drop_pid(cp, pid);
}

int cuda_probes__reap(struct cuda_probes *cp)
{
	int n = 0;

	for (int i = 0; cp && i < cp->natt; i++) {
		pid_t pid = cp->att[i].pid;

		/* gone: its links are inert, and its pid may come back as another process */
		if (pid > 0 && kill(pid, 0) < 0 && errno == ESRCH) {
			n += drop_pid(cp, pid);
			i = -1;
		}
	}
	return n;
}

void cuda_probes__free(struct cuda_probes *cp)
{
	if (!cp)
		return;
	/* all the classic links of all processes in one parallel pass */
	{
		struct bpf_link **all = NULL;
		int n = 0, cap = 0;

		for (int i = 0; i < cp->natt; i++)
			cap += cp->att[i].nlinks;
		all = cap ? calloc(cap, sizeof(*all)) : NULL;
		for (int i = 0; all && i < cp->natt; i++) {
			memcpy(all + n, cp->att[i].links, cp->att[i].nlinks * sizeof(*all));
			n += cp->att[i].nlinks;
			cp->att[i].nlinks = 0;
		}
		destroy_links(all, n);
		free(all);
	}
	for (int i = 0; i < cp->natt; i++)
		release(&cp->att[i]);
	free(cp->att);
	keyset__free(cp->no_probe);
	free(cp);
}

// SPDX-License-Identifier: MIT
/*
 * inject_proc.c — what the injector reads about its target: /proc state and
 * status, the memory maps, the dynamic loader's dlopen/dlsym/dlerror found
 * through the ELF symbols of the mapped libc or ld.so, and the target's
 * memory (process_vm_readv/writev).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "gpu/inject.h"
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/ptrace.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include "gpu/inject_priv.h"
#include "lib/proc_maps.h"

#if defined(__x86_64__)

int inject_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	return (int)n;
}

/* State letter and flags of /proc/PID[/task/TID]/stat; 0 when unreadable. */
char inject_proc_state(pid_t pid, pid_t tid, unsigned long *flags)
{
	char path[64], buf[1024], *p;
	char st = 0;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (inject_read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');   /* comm may contain spaces and parens */
	if (!p)
		return 0;
	if (flags)
		*flags = 0;
	/* ") S ppid pgrp session tty tpgid flags" */
	if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &st, flags ? flags : &(unsigned long){0}) < 1)
		return 0;
	return st;
}

/* A state letter of inject_proc_state() for a task that is gone or going:
 * unreadable (0), zombie or dead. */
bool inject_state_gone(char st)
{
	return !st || st == 'Z' || st == 'X' || st == 'x';
}

long inject_status_field(pid_t pid, pid_t tid, const char *key)
{
	char path[64], buf[4096], *p;
	size_t kl = strlen(key);

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (inject_read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ':')
			return strtol(p + kl + 1, NULL, 10);
	return -1;
}

/* The "KEY:" line of /proc/PID/status contains WORD. */
bool inject_status_has_word(pid_t pid, const char *key, const char *word)
{
	char path[64], buf[4096], *p, *e;
	size_t kl = strlen(key), wl = strlen(word);

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (inject_read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) || p[kl] != ':')
			continue;
		e = strchr(p, '\n');
		if (e)
			*e = '\0';
		for (p += kl + 1; (p = strstr(p, word)); p += wl)
			if ((p[-1] == ' ' || p[-1] == '\t') && (p[wl] == ' ' || !p[wl]))
				return true;
		return false;
	}
	return false;
}

/* ---- the target's memory ------------------------------------------------ */

int inject_mem_write(struct inject_ctx *j, uint64_t addr, const void *data, size_t len)
{
	struct iovec local = { (void *)data, len }, remote = { (void *)addr, len };
	const unsigned char *d = data;
	size_t off = 0;

	if (process_vm_writev(j->tid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	/* Fallback: word by word through ptrace (works on any mapping ptrace can write). */
	while (off < len) {
		size_t n = len - off < 8 ? len - off : 8;
		long word = 0;

		if (n < 8) {
			errno = 0;
			word = ptrace(PTRACE_PEEKDATA, j->tid, (void *)(addr + off), NULL);
			if (errno)
				return -errno;
		}
		memcpy(&word, d + off, n);
		if (ptrace(PTRACE_POKEDATA, j->tid, (void *)(addr + off), (void *)word) < 0)
			return -errno;
		off += n;
	}
	return 0;
}

/* A NUL-terminated string at addr (at most len - 1 bytes). */
int inject_mem_read_str(struct inject_ctx *j, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	buf[0] = '\0';
	while (got < len - 1) {
		/* Stay within one page: a string may end just before an unmapped one. */
		size_t n = 4096 - ((addr + got) & 4095);
		struct iovec local, remote;
		ssize_t r;

		if (n > len - 1 - got)
			n = len - 1 - got;
		local = (struct iovec){ buf + got, n };
		remote = (struct iovec){ (void *)(addr + got), n };
		r = process_vm_readv(j->tid, &local, 1, &remote, 1, 0);
		if (r <= 0) {
			long word;

			errno = 0;
			word = ptrace(PTRACE_PEEKDATA, j->tid, (void *)(addr + got), NULL);
			if (errno)
				break;
			r = len - 1 - got < 8 ? (ssize_t)(len - 1 - got) : 8;
			memcpy(buf + got, &word, (size_t)r);
		}
		if (memchr(buf + got, '\0', (size_t)r))
			return 0;
		got += (size_t)r;
	}
	buf[got] = '\0';
	return got ? 0 : -EFAULT;
}

/* ---- /proc/PID/maps and the loader's symbols ------------------------------ */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The C library proper or libdl (glibc < 2.34 keeps dlopen there), musl's libc. */
static bool is_dl_provider(const char *b)
{
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-2.", 7) || !strncmp(b, "libdl.so", 8) ||
	       !strncmp(b, "libdl-", 6) || !strncmp(b, "ld-musl-", 8) || !strncmp(b, "libc.musl-", 10);
}

static bool is_loader(const char *b)
{
	return !strncmp(b, "ld-linux", 8) || !strncmp(b, "ld-2.", 5) || !strncmp(b, "ld-musl-", 8) ||
	       !strcmp(b, "ld.so");
}

/*
 * Look names up in the .dynsym of an ELF file; vals[i] = st_value (0: not
 * found). Prefer the default version (dlopen@@GLIBC_2.34 over the compat
 * dlopen@GLIBC_2.2.5; in glibc 2.36 they are the same address anyway).
 * *vaddr0 = the page-aligned p_vaddr of the segment at file offset 0.
 */
static int elf_lookup(int fd, const char *const *names, uint64_t *vals, int n, uint64_t *vaddr0)
{
	bool hidden[8] = { 0 };
	Elf_Scn *scn = NULL, *versym = NULL, *dynsym = NULL;
	GElf_Shdr sh, dsh;
	Elf_Data *data, *vdata = NULL;
	GElf_Ehdr eh;
	size_t nph;
	bool have0 = false;
	Elf *e;
	int rc = -ENOEXEC;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -ENOEXEC;
	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    elf_getphdrnum(e, &nph))
		goto out;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*vaddr0 = ph.p_vaddr & ~4095ull;
			have0 = true;
			break;
		}
	}
	if (!have0)
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		else if (sh.sh_type == SHT_GNU_versym)
			versym = scn;
	}
	if (!dynsym || !gelf_getshdr(dynsym, &dsh) || !(data = elf_getdata(dynsym, NULL)))
		goto out;
	if (versym)
		vdata = elf_getdata(versym, NULL);
	for (size_t i = 0; i < dsh.sh_size / (dsh.sh_entsize ? dsh.sh_entsize : 1); i++) {
		GElf_Sym s;
		const char *nm;
		bool hid = false;

		if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_value)
			continue;
		nm = elf_strptr(e, dsh.sh_link, s.st_name);
		if (!nm)
			continue;
		if (vdata && (i + 1) * sizeof(GElf_Versym) <= vdata->d_size)
			hid = ((const GElf_Versym *)vdata->d_buf)[i] & 0x8000;
		for (int k = 0; k < n; k++)
			if (!strcmp(nm, names[k]) && (!vals[k] || (hidden[k] && !hid))) {
				vals[k] = s.st_value;
				hidden[k] = hid;
			}
	}
	rc = 0;
out:
	elf_end(e);
	return rc;
}

/* Open the file behind a mapping as the target sees it, checked by inode. */
static int open_mapped(pid_t pid, const struct proc_map *m)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int fd;

	/* map_files is the mapped inode itself (root only), even if deleted. */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->lo, m->hi);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	for (int i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m->path);
		else
			snprintf(path, sizeof(path), "%s", m->path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_ino == m->ino)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* dlopen/dlsym/dlerror/dlclose addresses in the target; unsafe text ranges. */
int inject_resolve_dl(struct inject_ctx *j)
{
	static const char *const names[] = { "dlopen", "dlsym", "dlerror", "dlclose" };
	uint64_t found[4] = { 0 };
	bool any_lib = false, dyn = false;
	unsigned nmaps = 0;
	struct proc_maps it;
	struct proc_map m;
	int err;

	err = proc_maps__open(&it, j->pid);
	if (err) {
		if (err == -EACCES || err == -EPERM)
			return inject_perm_error(j, -err, "cannot read the memory map of");
		return inject_fail(j, ESRCH, "pid %d: no such process", j->pid);
	}
	while (proc_maps__next(&it, &m) > 0) {
		const char *b;

		nmaps++;
		if (m.lo == 0) {
			proc_maps__close(&it);
			/* Our return address 0 would execute code instead of faulting. */
			return inject_fail(j, ENOTSUP, "pid %d maps page 0 (vm.mmap_min_addr=0?): "
				    "cannot call functions in it safely", j->pid);
		}
		if (m.path[0] != '/')
			continue;
		b = base_name(m.path);
		if ((is_dl_provider(b) || is_loader(b)) && strchr(m.perms, 'x') &&
		    j->nunsafe < MAX_UNSAFE)
			j->unsafe[j->nunsafe++] = (struct inject_range){ m.lo, m.hi };
		if (is_loader(b)) {
			dyn = true;
			if (strchr(m.perms, 'x') && j->nloader < MAX_UNSAFE)
				j->loader[j->nloader++] = (struct inject_range){ m.lo, m.hi };
		}
		if (!is_dl_provider(b) || m.offset != 0)
			continue;
		any_lib = true;
		{
			uint64_t vals[4] = { 0 }, vaddr0 = 0;
			int fd = open_mapped(j->pid, &m);

			if (fd < 0)
				continue;
			if (elf_lookup(fd, names, vals, 4, &vaddr0) == 0)
				for (int k = 0; k < 4; k++)
					if (vals[k] && !found[k])
						found[k] = m.lo - vaddr0 + vals[k];
			close(fd);
		}
	}
	proc_maps__close(&it);
	j->fn_dlopen = found[0];
	j->fn_dlsym = found[1];
	j->fn_dlerror = found[2];
	j->fn_dlclose = found[3];
	if (j->fn_dlopen && j->fn_dlsym)
		return 0;
	/* kernel threads were turned away before: no memory at all means the
	 * process is exiting (its mm released before it becomes a zombie) */
	if (!nmaps)
		return inject_fail(j, ESRCH, "pid %d exited during the injection (its memory is gone)",
			    j->pid);
	if (!dyn && !any_lib)
		return inject_fail(j, ENOTSUP, "pid %d has no dynamic loader or C library mapped "
			    "(statically linked?): cannot dlopen in it", j->pid);
	return inject_fail(j, ENOTSUP, "pid %d: no dlopen/dlsym in its C library%s (glibc < 2.34 "
		    "programs that do not link libdl are not supported)", j->pid,
		    any_lib ? "" : " (could not read it)");
}

bool inject_in_ranges(const struct inject_range *r, int n, uint64_t pc)
{
	for (int i = 0; i < n; i++)
		if (pc >= r[i].lo && pc < r[i].hi)
			return true;
	return false;
}

/* The mapping containing addr: its start and whether it is the main [stack]. */
int inject_find_mapping(pid_t pid, uint64_t addr, uint64_t *lo, bool *is_stack)
{
	struct proc_maps it;
	struct proc_map m;
	int rc = proc_maps__open(&it, pid);

	if (rc)
		return rc;
	rc = -ENOENT;
	while (proc_maps__next(&it, &m) > 0) {
		if (addr >= m.lo && addr < m.hi) {
			*lo = m.lo;
			*is_stack = !strcmp(m.path, "[stack]");
			rc = 0;
			break;
		}
	}
	proc_maps__close(&it);
	return rc;
}

#endif /* __x86_64__ */

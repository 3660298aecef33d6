// SPDX-License-Identifier: MIT
/*
 * cuda_stub_syms.c — names for launch stubs: the ELF symbol tables of the
 * files a traced process maps, loaded once and cached, searched by address,
 * demangled when a C++ demangler is at hand; a SYM record per stub the
 * capture names.
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

/* Function symbols of one ELF file, sorted by address. */
struct symtab {
	__u64 dev, ino;
	struct cuda_sym *syms;
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
	const struct cuda_sym *x = a, *y = b;

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
				struct cuda_sym *n;

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
	char path[PATH_MAX + 32];
	unsigned long long ino = 0, foff = 0;
	unsigned int maj = 0, min = 0;
	const struct symtab *t = NULL;
	struct proc_maps it;
	struct proc_map m;
	struct gpuio_gpu_sym rec;
	const char *name;
	char *dem = NULL;
	bool found = false;
	int status = -1;
	size_t len;

	if (proc_maps__open(&it, pid))
		return -ESRCH;
	while (proc_maps__next(&it, &m) > 0) {
		if (addr < m.lo || addr >= m.hi)
			continue;
		if (proc_map__is_file(&m)) {
			snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m.path);
			foff = addr - m.lo + m.offset;
			maj = m.maj;
			min = m.min;
			ino = m.ino;
			found = true;
		}
		break;
	}
	proc_maps__close(&it);
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

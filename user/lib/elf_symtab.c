// SPDX-License-Identifier: MIT
/*
 * elf_symtab.c — addresses of a process to the functions of its mapped
 * files (elf_symtab.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include "lib/elf_symtab.h"
#include "lib/log.h"
#include "lib/proc_maps.h"

struct sym {
	uint64_t addr, size;
	uint32_t name;                  /* offset in names */
};

/* Function symbols of one ELF file, sorted by address. */
struct symtab {
	uint64_t dev, ino;
	struct sym *syms;
	size_t nsyms;
	char *names;
	struct {
		uint64_t off, filesz, vaddr;
	} load[16];
	int nload;
};

#define SYM_CACHE 16
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

static struct symtab *symtab_load(const char *path, uint64_t dev, uint64_t ino)
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
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
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
			t->syms[t->nsyms].name = (uint32_t)nlen;
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

static struct symtab *symtab_get(const char *path, uint64_t dev, uint64_t ino)
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

void elf_symtab__cache_free(void)
{
	for (int i = 0; i < SYM_CACHE; i++) {
		symtab_free(sym_cache[i]);
		sym_cache[i] = NULL;
	}
}

/* The function containing vaddr (exact start preferred), or NULL. */
static const char *symtab_find(const struct symtab *t, uint64_t vaddr)
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
			pr_debug("no libstdc++ demangler: C++ names stay mangled");
	}
	return fn;
}


int elf_where(pid_t pid, uint64_t addr, struct elf_where *w)
{
	struct proc_maps it;
	struct proc_map m;
	int err = proc_maps__open(&it, pid);

	if (err)
		return err;
	err = -ENOENT;
	while (proc_maps__next(&it, &m) > 0) {
		if (addr < m.lo || addr >= m.hi)
			continue;
		if (proc_map__is_file(&m)) {
			snprintf(w->path, sizeof(w->path), "%s", m.path);
			snprintf(w->open_path, sizeof(w->open_path), "/proc/%d/root%s", (int)pid, m.path);
			w->foff = addr - m.lo + m.offset;
			w->dev = makedev(m.maj, m.min);
			w->ino = m.ino;
			err = 0;
		}
		break;
	}
	proc_maps__close(&it);
	return err;
}

bool elf_symtab__name(const struct elf_where *w, char *buf, size_t len)
{
	const struct symtab *t = symtab_get(w->open_path, w->dev, w->ino);
	const char *name = NULL;
	char *dem = NULL;
	int status = -1;

	if (!t)
		return false;
	for (int i = 0; i < t->nload && !name; i++)
		if (w->foff >= t->load[i].off && w->foff < t->load[i].off + t->load[i].filesz)
			name = symtab_find(t, w->foff - t->load[i].off + t->load[i].vaddr);
	if (!name)
		return false;
	if (demangler())
		dem = demangler()(name, NULL, NULL, &status);
	snprintf(buf, len, "%s", dem && status == 0 ? dem : name);
	free(dem);
	return true;
}

/* x86-64: a near call (E8 rel32) or FF /2 of exactly the bytes before (a
 * ModRM, SIB and displacement of the length they say) */
static bool x86_call_before(const uint8_t *b, int n)
{
	if (n >= 5 && b[n - 5] == 0xe8)
		return true;
	for (int l = 2; l <= 7 && l <= n; l++) {
		uint8_t modrm = b[n - l + 1], mod = modrm >> 6, rm = modrm & 7;
		int want = 2;

		if (b[n - l] != 0xff || ((modrm >> 3) & 7) != 2)
			continue;
		if (mod != 3 && rm == 4) {              /* a SIB byte */
			if (l < 3)
				continue;
			want++;
			if (mod == 0 && (b[n - l + 2] & 7) == 5)
				want += 4;
		}
		if (mod == 0 && rm == 5)
			want += 4;                      /* rip-relative */
		else if (mod == 1)
			want += 1;
		else if (mod == 2)
			want += 4;
		if (want == l)
			return true;
	}
	return false;
}

bool elf_symtab__after_call(const struct elf_where *w)
{
#if defined(__x86_64__) || defined(__aarch64__)
	uint8_t b[8];
	int fd, n;

	if (w->foff < sizeof(b))
		return false;
	fd = open(w->open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = (int)pread(fd, b, sizeof(b), (off_t)(w->foff - sizeof(b)));
	close(fd);
	if (n != (int)sizeof(b))
		return false;
#if defined(__x86_64__)
	return x86_call_before(b, n);
#else
	uint32_t insn;

	memcpy(&insn, b + 4, 4);                /* BL, BLR */
	return (insn & 0xfc000000u) == 0x94000000u || (insn & 0xfffffc1fu) == 0xd63f0000u;
#endif
#else
	(void)w;
	return true;
#endif
}

// SPDX-License-Identifier: MIT
/* native_frames.c — native frames checked and named (native_frames.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "lib/elf_symtab.h"
#include "lib/kmap.h"
#include "lib/proc_maps.h"
#include "trace/native_frames.h"

/* what is known of an address (per process and image) */
#define NA_KNOWN   1
#define NA_FILE    2            /* in a mapped file: named (a PY_CODE record sent) */
#define NA_CALL    4            /* a call instruction before it: a return address */

/* A process's mappings, as last read: a torch process maps ~1,700 (a read
 * of /proc/PID/maps each, ~1 ms), and a new stack brings up to 8 new
 * addresses. Read again only when an address is in none of them: one in a
 * region that is not an executable file (JIT code, the heap a frame-pointer
 * chain through code without them points into) is answered from the last
 * read. Re-reading for each of those took a third of gpuio's CPU under a
 * DataLoader; a library loaded since lands where nothing was mapped. */
struct fmap {
	uint64_t lo, hi, offset, dev, ino;
	char *path;             /* NULL: not an executable file mapping */
};
struct pmaps {
	uint64_t key;           /* pid | image << 32; 0: empty */
	struct fmap *m;
	size_t n, cap;
};
#define PMAPS_CACHED 8

struct native_frames {
	void (*emit)(void *ctx, const void *rec, size_t len);
	void *ctx;
	struct kmap addrs;      /* (pid | image << 32, address) -> NA_* */
	struct kmap images;     /* (pid, 0) -> execs seen */
	struct pmaps maps[PMAPS_CACHED];
	unsigned next_maps;
	unsigned long named, cut;
};

static void pmaps_clear(struct pmaps *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->m[i].path);
	p->n = 0;
	p->key = 0;
}

static int pmaps_read(struct pmaps *p, uint64_t key, pid_t pid)
{
	struct proc_maps it;
	struct proc_map m;
	int err = proc_maps__open(&it, pid);

	pmaps_clear(p);
	if (err)
		return err;
	while (proc_maps__next(&it, &m) > 0) {
		bool named = proc_map__is_file(&m) && m.perms[2] == 'x';

		if (array_grow((void **)&p->m, &p->cap, p->n + 1, sizeof(*p->m))) {
			proc_maps__close(&it);
			return -ENOMEM;
		}
		p->m[p->n].path = named ? strdup(m.path) : NULL;
		if (named && !p->m[p->n].path) {
			proc_maps__close(&it);
			return -ENOMEM;
		}
		p->m[p->n].lo = m.lo, p->m[p->n].hi = m.hi, p->m[p->n].offset = m.offset;
		p->m[p->n].dev = makedev(m.maj, m.min), p->m[p->n].ino = m.ino;
		p->n++;
	}
	proc_maps__close(&it);
	p->key = key;
	return 0;
}

static const struct fmap *pmaps_find(const struct pmaps *p, uint64_t addr)
{
	for (size_t i = 0; i < p->n; i++)
		if (addr >= p->m[i].lo && addr < p->m[i].hi)
			return &p->m[i];
	return NULL;
}

/* Could addr be in a mapping at all? Below mmap_min_addr's usual 64 KiB, or
 * above the 47-bit user half of x86-64 (4-level page tables; a process asks
 * for more explicitly), it is a word of data that a frame-pointer chain
 * through code without them took for a return address. */
static bool user_text_addr(uint64_t addr)
{
#if defined(__x86_64__)
	return addr >= 0x10000 && addr < (1ull << 47);
#else
	return addr >= 0x10000;
#endif
}

/* Where addr of pid (image key) lies: its executable file mapping; the
 * maps read again once when it lies in no region of those last read */
static int where(struct native_frames *n, uint64_t key, pid_t pid, uint64_t addr,
		 struct elf_where *w)
{
	struct pmaps *p = NULL;
	const struct fmap *f = NULL;

	for (unsigned i = 0; i < PMAPS_CACHED && !p; i++)
		if (n->maps[i].key == key)
			p = &n->maps[i];
	if (p)
		f = pmaps_find(p, addr);
	if (f && !f->path)
		return -ENOENT;         /* mapped, not an executable file */
	if (!f && !user_text_addr(addr))
		return -ENOENT;         /* a word of data, not an address: no read for it */
	if (!f) {
		if (!p) {
			p = &n->maps[n->next_maps];
			n->next_maps = (n->next_maps + 1) % PMAPS_CACHED;
		}
		if (pmaps_read(p, key, pid))
			return -ESRCH;
		if (!(f = pmaps_find(p, addr)) || !f->path)
			return -ENOENT;
	}
	snprintf(w->path, sizeof(w->path), "%s", f->path);
	snprintf(w->open_path, sizeof(w->open_path), "/proc/%d/root%s", (int)pid, f->path);
	w->foff = addr - f->lo + f->offset;
	w->dev = f->dev;
	w->ino = f->ino;
	return 0;
}

struct native_frames *native_frames__new(void (*emit)(void *ctx, const void *rec, size_t len),
					 void *ctx)
{
	struct native_frames *n = calloc(1, sizeof(*n));

	if (n) {
		n->emit = emit;
		n->ctx = ctx;
	}
	return n;
}

void native_frames__free(struct native_frames *n)
{
	if (!n)
		return;
	kmap__free(&n->addrs);
	kmap__free(&n->images);
	for (unsigned i = 0; i < PMAPS_CACHED; i++) {
		pmaps_clear(&n->maps[i]);
		free(n->maps[i].m);
	}
	free(n);
}

void native_frames__exec(struct native_frames *n, pid_t pid)
{
	uint64_t *v;

	if (n && kmap__upsert(&n->images, (uint64_t)pid, 0, &v) >= 0)
		(*v)++;
}

void native_frames__counts(const struct native_frames *n, unsigned long *named, unsigned long *cut)
{
	*named = n ? n->named : 0;
	*cut = n ? n->cut : 0;
}

/* The PY_CODE record that names addr: its file, its function (or +offset) */
static void name_addr(struct native_frames *n, const struct gpuio_hdr *h, uint64_t addr,
		      const struct elf_where *w)
{
	struct {
		struct gpuio_py_code c;
		uint8_t data[GPUIO_PY_FILE_MAX + GPUIO_PY_NAME_MAX + 8];
	} rec;
	char name[GPUIO_PY_NAME_MAX + 1];
	size_t fl = strlen(w->path), nl;

	if (!elf_symtab__name(w, name, sizeof(name)))
		snprintf(name, sizeof(name), "+0x%llx", (unsigned long long)w->foff);
	nl = strlen(name);
	memset(&rec.c, 0, sizeof(rec.c));
	if (fl > GPUIO_PY_FILE_MAX) {
		fl = GPUIO_PY_FILE_MAX;
		rec.c.flags |= GPUIO_PYC_FILE_CUT;
	}
	memcpy(rec.data, w->path, fl);
	memcpy(rec.data + fl, name, nl);
	rec.c.code = addr;
	rec.c.flags |= GPUIO_PYC_NATIVE;
	rec.c.file_len = (__u16)fl;
	rec.c.name_len = (__u16)nl;
	rec.c.file_kind = rec.c.name_kind = GPUIO_PYSTR_UTF8;
	rec.c.hdr = (struct gpuio_hdr){ .type = GPUIO_REC_PY_CODE, .pid = h->pid, .tid = h->tid,
					.ts = h->ts };
	rec.c.hdr.size = (__u16)((sizeof(rec.c) + fl + nl + 7) & ~(size_t)7);
	memset(rec.data + fl + nl, 0, rec.c.hdr.size - sizeof(rec.c) - fl - nl);
	n->emit(n->ctx, &rec, rec.c.hdr.size);
	n->named++;
}

/* What is known of pid's address: looked at once per process and image */
static unsigned addr_state(struct native_frames *n, const struct gpuio_hdr *h, uint64_t addr)
{
	uint64_t *img = kmap__get(&n->images, h->pid, 0), *v;
	uint64_t key = h->pid | (img ? *img : 0) << 32;
	struct elf_where w;

	if (kmap__upsert(&n->addrs, key, addr, &v) < 0)
		return 0;
	if (*v)
		return (unsigned)*v;
	*v = NA_KNOWN;
	if (where(n, key, (pid_t)h->pid, addr, &w))
		return NA_KNOWN;        /* anonymous (JIT code), or the process is gone */
	*v |= NA_FILE | (elf_symtab__after_call(&w) ? NA_CALL : 0);
	name_addr(n, h, addr, &w);
	return (unsigned)*v;
}

size_t native_frames__take(struct native_frames *n, const struct gpuio_py_stack *r, size_t size,
			   struct gpuio_py_stack *out, size_t out_size)
{
	unsigned nf, nat = 0, keep;

	if (size > out_size || size < sizeof(*r))
		return 0;
	memcpy(out, r, size);
	if (!n)
		return size;
	nf = out->nframes;
	if (sizeof(*r) + (size_t)nf * sizeof(r->frames[0]) > size)
		nf = (unsigned)((size - sizeof(*r)) / sizeof(r->frames[0]));
	while (nat < nf && out->frames[nat].lasti == GPUIO_PY_LASTI_NATIVE)
		nat++;
	for (keep = 0; keep < nat; keep++) {
		unsigned st = addr_state(n, &r->hdr, out->frames[keep].code);

		/* the innermost is where the thread is; the others must be returns */
		if (!(st & NA_FILE) || (keep && !(st & NA_CALL)))
			break;
	}
	if (keep == nat)
		return size;
	n->cut += nat - keep;
	memmove(&out->frames[keep], &out->frames[nat], (nf - nat) * sizeof(out->frames[0]));
	out->nframes = (__u16)(nf - (nat - keep));
	out->flags |= GPUIO_PYS_NATIVE_CUT;
	out->hdr.size = (__u16)(sizeof(*out) + out->nframes * sizeof(out->frames[0]));
	return out->hdr.size;
}

// SPDX-License-Identifier: MIT
/*
 * py_find.c — a process's CPython interpreter and its checked layout
 * (py_find.h).
 *
 * The file: the first mapped file named like a python binary or a
 * libpython that defines _PyRuntime. Its version: Py_Version (3.11+), else
 * the file's name (3.10). Its layout: the table (3.10-3.12) or the
 * interpreter's _Py_DebugOffsets (3.13). The check, through the process's
 * memory: an interpreter exists; every thread state in its list points
 * back to it (and, 3.11+, names a thread of the process); the frames of
 * each thread (up to FRAMES_CHECKED) hold code objects — their type is
 * PyCode_Type — whose file names read as text. Any mismatch: no frames.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "lib/elf_syms.h"
#include "lib/proc_maps.h"
#include "lib/proc_mem.h"
#include "python/py_find.h"

#define THREADS_CHECKED 4096
#define FRAMES_CHECKED  8
#define TS_INTERP       16      /* PyThreadState.interp: the same from 3.10 to 3.13 */

/* A mapped file that may be CPython: .../python3.X or .../libpython3.X*.so* */
static bool python_like(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/* 3.minor from a file name (".../python3.10", "libpython3.10.so.1.0"); 0 unknown */
static unsigned minor_of_name(const char *path)
{
	const char *p = strstr(path, "python3.");
	unsigned v = 0;

	if (!p)
		return 0;
	for (p += 8; isdigit((unsigned char)*p); p++)
		v = v * 10 + (unsigned)(*p - '0');
	return v;
}

struct cand {
	char path[256];
	uint64_t base;          /* where its offset-0 mapping starts */
	bool has_base;
	uint64_t text_lo, text_hi;   /* its executable mappings: [lo, hi), 0 none */
};

/*
 * The candidates, each once, with the start of its first mapping and the
 * span of its executable ones: one read of the maps (a torch process's,
 * ~2.5 ms, was read twice for each process at attach).
 */
static int candidates(pid_t pid, struct cand *c, int max)
{
	struct proc_maps it;
	struct proc_map m;
	int n = 0, k = 0, err = proc_maps__open(&it, pid);

	if (err)
		return err;
	while (proc_maps__next(&it, &m) > 0) {
		int i;

		if (!proc_map__is_file(&m) || !python_like(m.path))
			continue;
		for (i = 0; i < n && strcmp(c[i].path, m.path); i++)
			;
		if (i == n) {
			if (n == max)
				continue;
			memset(&c[n], 0, sizeof(c[n]));
			snprintf(c[n++].path, sizeof(c[0].path), "%s", m.path);
		}
		if (m.offset == 0 && !c[i].has_base) {
			c[i].base = m.lo;
			c[i].has_base = true;
		}
		if (m.perms[2] == 'x') {
			if (!c[i].text_hi || m.lo < c[i].text_lo)
				c[i].text_lo = m.lo;
			if (m.hi > c[i].text_hi)
				c[i].text_hi = m.hi;
		}
	}
	proc_maps__close(&it);
	/* a file none of whose mappings starts at offset 0 is no candidate */
	for (int i = 0; i < n; i++)
		if (c[i].has_base)
			c[k++] = c[i];
	return k;
}

/*
 * A file's symbols, kept: a process starting is looked at every few ms, and
 * every DataLoader worker a spawn makes maps the same libpython.
 */
#define SYMS_CACHED 16
struct syms {
	dev_t dev;
	ino_t ino;
	time_t mtime;
	bool python;            /* _PyRuntime and PyCode_Type found */
	uint64_t runtime, code_type, version;   /* link-time addresses (version 0: none) */
	struct elf_info info;
};
static struct syms cache[SYMS_CACHED];
static unsigned ncache, next_slot;

static const struct syms *file_syms(const char *file)
{
	struct elf_sym_req req[] = { { .name = "_PyRuntime" }, { .name = "PyCode_Type" },
				     { .name = "Py_Version" } };
	struct stat st;
	struct syms *s;

	if (stat(file, &st))
		return NULL;
	for (unsigned i = 0; i < ncache; i++)
		if (cache[i].dev == st.st_dev && cache[i].ino == st.st_ino &&
		    cache[i].mtime == st.st_mtime)
			return &cache[i];
	s = &cache[next_slot];
	next_slot = (next_slot + 1) % SYMS_CACHED;
	if (ncache < SYMS_CACHED)
		ncache++;
	memset(s, 0, sizeof(*s));
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->mtime = st.st_mtime;
	if (elf_syms__lookup(file, req, 3, &s->info) >= 2 && req[0].found && req[1].found) {
		s->python = true;
		s->runtime = req[0].value;
		s->code_type = req[1].value;
		s->version = req[2].found ? req[2].value : 0;
	}
	return s;
}

/* _PyRuntime, PyCode_Type and Py_Version of a candidate, at their run-time addresses */
static bool symbols(pid_t pid, const struct cand *c, uint64_t *runtime, uint64_t *code_type,
		    uint64_t *version)
{
	const struct syms *s;
	char file[320];
	uint64_t bias;

	/* through the process's root: a container's files are its own */
	snprintf(file, sizeof(file), "/proc/%d/root%s", (int)pid, c->path);
	s = file_syms(file);
	if (!s || !s->python)
		return false;
	bias = s->info.pie ? c->base - s->info.first_vaddr : 0;
	*runtime = s->runtime + bias;
	*code_type = s->code_type + bias;
	*version = s->version ? s->version + bias : 0;
	return true;
}

/* The layout of 3.minor: the table, or the interpreter's own offsets. */
static int layout_of(pid_t pid, struct py_found *f, char *why, size_t len)
{
	uint8_t dbg[PY_DEBUG_OFFSETS_SIZE];
	uint64_t hex = 0;
	int err;

	if (f->minor >= PY_MINOR_MIN && f->minor <= PY_MINOR_TABLE_MAX)
		return py_layout__table(f->minor, &f->layout) ?: py_layout__finish(&f->layout);
	if (f->minor && f->minor < PY_MINOR_MIN) {
		snprintf(why, len, "Python 3.%u: gpuio reads the frames of 3.10 and later", f->minor);
		return -ENOTSUP;
	}
	err = proc_mem__read(pid, f->layout.runtime, dbg, sizeof(dbg));
	if (err)
		return err;
	err = py_layout__debug_offsets(dbg, sizeof(dbg), &f->layout, &hex);
	if (err == -ENOTSUP)
		snprintf(why, len, "Python %llu.%llu (0x%llx): gpuio reads the frames of 3.10 to 3.13",
			 (unsigned long long)(hex >> 24), (unsigned long long)((hex >> 16) & 0xff),
			 (unsigned long long)hex);
	else if (err)
		snprintf(why, len, "Python 3.%u in %s: no _Py_DebugOffsets at _PyRuntime", f->minor,
			 f->path);
	else if ((err = py_layout__finish(&f->layout)))
		snprintf(why, len, "Python 3.%u: its code objects' names lie beyond what the walk reads",
			 f->minor);
	return err;
}

/* Is tid a thread of pid? */
static bool has_thread(pid_t pid, uint64_t tid)
{
	char p[64];
	DIR *d;

	if (!tid || tid > (1u << 22))
		return false;
	snprintf(p, sizeof(p), "/proc/%d/task/%llu", (int)pid, (unsigned long long)tid);
	d = opendir(p);
	if (d)
		closedir(d);
	return d != NULL;
}

/* A str object's text (ASCII only: file names of Python code almost always are) */
static bool ascii_str(pid_t pid, const struct gpuio_py_layout *L, uint64_t obj, char *buf,
		      size_t len)
{
	uint8_t hdr[64];
	uint64_t n;

	if (!obj || proc_mem__read(pid, obj, hdr, sizeof(hdr)))
		return false;
	if ((hdr[L->str_state] & 0x60) != 0x60)         /* compact, ASCII */
		return false;
	memcpy(&n, hdr + L->str_len, sizeof(n));
	if (!n || n >= len || proc_mem__read(pid, obj + L->str_ascii_size, buf, n))
		return false;
	buf[n] = 0;
	for (size_t i = 0; i < n; i++)
		if (!isprint((unsigned char)buf[i]))
			return false;
	return true;
}

/*
 * The frames of one thread state, as the BPF walk reads them: code objects
 * with file names that read. The process runs while it is read: a frame
 * popped under the reader gives garbage, so a thread's walk stops at its
 * first bad frame (counted), and only a layout that reads no good frame at
 * all is a mismatch (py_procs.c asks a few times before it says so).
 */
static void check_frames(pid_t pid, struct py_found *f, uint64_t ts, unsigned *bad)
{
	const struct gpuio_py_layout *L = &f->layout;
	uint64_t frame = proc_mem__u64(pid, ts + L->ts_frame);
	char name[256];

	if (L->cframe_frame != GPUIO_PY_NONE && frame)
		frame = proc_mem__u64(pid, frame + L->cframe_frame);
	for (int i = 0; frame && i < FRAMES_CHECKED; i++) {
		uint64_t code = proc_mem__u64(pid, frame + L->f_code);
		uint8_t owner = 0;

		if (L->f_owner != GPUIO_PY_NONE)
			proc_mem__read(pid, frame + L->f_owner, &owner, 1);
		if (L->owner_cstack != 0xff && owner == L->owner_cstack) {
			frame = proc_mem__u64(pid, frame + L->f_prev);
			continue;
		}
		if (proc_mem__u64(pid, code + 8) != L->code_type ||
		    !ascii_str(pid, L, proc_mem__u64(pid, code + L->co_filename), name, sizeof(name))) {
			(*bad)++;
			return;
		}
		f->frames++;
		frame = proc_mem__u64(pid, frame + L->f_prev);
	}
}

/* The interpreter's thread states point back to it and name the process's threads. */
static int check(pid_t pid, struct py_found *f, char *why, size_t len)
{
	const struct gpuio_py_layout *L = &f->layout;
	uint64_t interp = proc_mem__u64(pid, L->runtime + L->interp_head), ts;
	unsigned named = 0, bad = 0;

	if (!interp) {
		snprintf(why, len, "Python 3.%u in %s: no interpreter yet", f->minor, f->path);
		return -EAGAIN;
	}
	ts = proc_mem__u64(pid, interp + L->threads_head);
	for (f->threads = 0; ts && f->threads < THREADS_CHECKED; f->threads++) {
		if (proc_mem__u64(pid, ts + TS_INTERP) != interp) {
			snprintf(why, len, "Python 3.%u in %s: a thread state does not point to its "
				 "interpreter (layout mismatch)", f->minor, f->path);
			return -EPROTO;
		}
		/* 3.11+: native_thread_id follows thread_id */
		if (f->minor >= 11 && has_thread(pid, proc_mem__u64(pid, ts + L->ts_thread_id + 8)))
			named++;
		check_frames(pid, f, ts, &bad);
		ts = proc_mem__u64(pid, ts + L->ts_next);
	}
	if (f->minor >= 11 && f->threads && !named) {
		snprintf(why, len, "Python 3.%u in %s: no thread state names a thread of the process "
			 "(layout mismatch)", f->minor, f->path);
		return -EPROTO;
	}
	if (!f->frames && bad) {
		snprintf(why, len, "Python 3.%u in %s: no frame's code reads as a code object with a "
			 "file name (layout mismatch)", f->minor, f->path);
		return -EPROTO;
	}
	if (!f->frames) {
		snprintf(why, len, "Python 3.%u in %s: no Python frame yet", f->minor, f->path);
		return -EAGAIN;
	}
	snprintf(why, len, "Python 3.%u (%s): %u thread state(s), %u frame(s) checked", f->minor,
		 f->path, f->threads, f->frames);
	return 0;
}

int py_find__layout(pid_t pid, struct py_found *out, char *why, size_t len)
{
	struct cand c[8];
	uint64_t version;
	int n = candidates(pid, c, 8);

	memset(out, 0, sizeof(*out));
	if (n < 0) {
		snprintf(why, len, "pid %d: %s", (int)pid, strerror(-n));
		return n;
	}
	for (int i = 0; i < n; i++) {
		uint64_t runtime, code_type;
		uint32_t hex = 0;
		int err;

		if (!symbols(pid, &c[i], &runtime, &code_type, &version))
			continue;
		snprintf(out->path, sizeof(out->path), "%s", c[i].path);
		if (version && !proc_mem__read(pid, version, &hex, sizeof(hex)))
			out->hex = hex;
		out->minor = hex ? (hex >> 16) & 0xff : minor_of_name(c[i].path);
		if ((hex && hex >> 24 != 3) || (!out->minor && !hex)) {
			snprintf(why, len, "%s: not a CPython 3 gpuio knows", c[i].path);
			return -ENOTSUP;
		}
		out->layout.runtime = runtime;
		if ((err = layout_of(pid, out, why, len)))
			return err;
		out->layout.runtime = runtime;          /* the table's layout is addresses-free */
		out->layout.code_type = code_type;
		out->layout.text_lo = c[i].text_lo;
		out->layout.text_hi = c[i].text_hi;
		snprintf(why, len, "Python 3.%u (%s): not checked yet", out->minor, out->path);
		return 0;
	}
	snprintf(why, len, "pid %d: no CPython (no mapped file defines _PyRuntime)", (int)pid);
	return -ENOENT;
}

int py_find__check(pid_t pid, struct py_found *f, char *why, size_t len)
{
	f->threads = f->frames = 0;
	return check(pid, f, why, len);
}

int py_find(pid_t pid, struct py_found *out, char *why, size_t len)
{
	int err = py_find__layout(pid, out, why, len);

	return err ? err : py_find__check(pid, out, why, len);
}

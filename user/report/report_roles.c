// SPDX-License-Identifier: MIT
/*
 * report_roles.c — what each file is to the job, so that the data
 * recommendations look at data only and only checkpoints count as such:
 *  - code: interpreter imports and libraries (.py, .pyc, .so, site-packages,
 *    /usr/lib, ...) and system config (/etc): a Python job opens a thousand
 *    of them, small and read once, which are not its dataset; and any file
 *    an instruction fetch faulted on (a program's executable);
 *  - other: pseudo files (/proc, /sys, /dev, pipes, sockets), logs, stdout
 *    and any written file that is not a checkpoint;
 *  - checkpoint: written, not read back, with a write burst of at least
 *    RPT_CKPT_MIN_BYTES, and synced, or rewritten / written again under the
 *    same name pattern (ckpt_0001.pt, ckpt_0002.pt), or named like one;
 *  - data: everything else the job read. A file written and later read is a
 *    dataset (shards prepared before training), never a checkpoint.
 * Runs after pass 1 (it needs every file's history and name) and drops the
 * write bursts of files that are not checkpoints from the checkpoint list.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "report/report_model.h"
#include "report/report_priv.h"
#include "report/report_roles.h"
#include "lib/units.h"

const char *const rpt_role_names[RPT_ROLE_N] = {
	[RPT_ROLE_DATA] = "data", [RPT_ROLE_CODE] = "code",
	[RPT_ROLE_CHECKPOINT] = "checkpoint", [RPT_ROLE_OTHER] = "other",
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* p is dir or below it: "/usr/lib" holds "/usr/lib/x", not "/usr/libx" */
static bool under(const char *p, size_t n, const char *dir)
{
	size_t k = strlen(dir);

	return n >= k && !memcmp(p, dir, k) && (n == k || p[k] == '/');
}

static bool ends(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && !strncasecmp(s + n - k, suf, k);
}

static bool has(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++)
		if (!strncasecmp(s + i, needle, k))
			return true;
	return false;
}

/* one whole component of the path is name */
static bool component(const char *p, size_t n, const char *name)
{
	size_t k = strlen(name);

	for (size_t i = 0; i + k <= n; i++)
		if ((i == 0 || p[i - 1] == '/') && !memcmp(p + i, name, k) &&
		    (i + k == n || p[i + k] == '/'))
			return true;
	return false;
}

/* libfoo.so, libfoo.so.1, libfoo.so.1.2.3 */
static bool shared_object(const char *b, size_t n)
{
	size_t i;

	if (n >= 3 && !memcmp(b + n - 3, ".so", 3))
		return true;
	for (i = n; i > 0 && (is_digit(b[i - 1]) || b[i - 1] == '.'); i--)
		;
	/* b[i..n) is ".N..." after "so" */
	return i >= 3 && i < n && b[i] == '.' && !memcmp(b + i - 3, ".so", 3);
}

static bool code_path(const char *p, size_t n, const char *b, size_t bn)
{
	static const char *const dirs[] = {
		"/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec", "/lib", "/lib32",
		"/lib64", "/usr/local/lib", "/usr/share", "/usr/local/share", "/etc",
		"/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin",
	};

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (under(p, n, dirs[i]))
			return true;
	if (component(p, n, "__pycache__") || component(p, n, "site-packages") ||
	    component(p, n, "dist-packages"))
		return true;
	/* case matters: a dataset file may well be called X.PY */
	return (bn >= 3 && !memcmp(b + bn - 3, ".py", 3)) ||
	       (bn >= 4 && (!memcmp(b + bn - 4, ".pyc", 4) || !memcmp(b + bn - 4, ".pyo", 4))) ||
	       shared_object(b, bn);
}

static bool log_name(const char *b, size_t n)
{
	static const char *const sufs[] = {
		".log", ".txt", ".out", ".err", ".csv", ".tsv", ".json", ".jsonl",
	};

	for (size_t i = 0; i < ARRAY_SIZE(sufs); i++)
		if (ends(b, n, sufs[i]))
			return true;
	return has(b, n, ".log.") || has(b, n, "tfevents") ||
	       (n == 6 && (!memcmp(b, "stdout", 6) || !memcmp(b, "stderr", 6)));
}

static bool ckpt_name(const char *p, size_t n, const char *b, size_t bn)
{
	static const char *const sufs[] = { ".pt", ".pth", ".ckpt", ".safetensors", ".distcp" };

	/* a directory counts too: checkpoint-500/pytorch_model-00001-of-00002.bin */
	if (has(p, n, "ckpt") || has(p, n, "checkpoint"))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(sufs); i++)
		if (ends(b, bn, sufs[i]))
			return true;
	return ends(b, bn, ".bin") && (has(b, bn, "model") || has(b, bn, "state"));
}

unsigned rpt_path_class(const char *p, size_t n)
{
	static const char *const tmp_sufs[] = { ".tmp", ".temp", ".part", ".partial", "~" };
	const char *b;
	size_t bn;
	unsigned c = 0;

	if (!n)
		return 0;
	/* pipe:[N], socket:[N], anon_inode:NAME ("?dev=..." is a file without a name) */
	if (p[0] != '/' && p[0] != '?')
		return RPT_PATH_PSEUDO;
	if (under(p, n, "/dev/shm"))
		c |= RPT_PATH_SHM;
	else if (under(p, n, "/proc") || under(p, n, "/sys") || under(p, n, "/dev") ||
		 (n >= 7 && !memcmp(p, "/memfd:", 7)))
		return RPT_PATH_PSEUDO;
	if (ends(p, n, " (deleted)"))
		n -= strlen(" (deleted)");
	/* an atomic save names the file it renames later: ckpt.pt.tmp */
	for (size_t i = 0; i < ARRAY_SIZE(tmp_sufs); i++)
		if (ends(p, n, tmp_sufs[i]) && n > strlen(tmp_sufs[i])) {
			n -= strlen(tmp_sufs[i]);
			break;
		}
	for (b = p + n; b > p && b[-1] != '/'; b--)
		;
	bn = (size_t)(p + n - b);
	/* code whatever its name: torch/utils/checkpoint.py, site-packages' .pth */
	if (code_path(p, n, b, bn))
		return c | RPT_PATH_CODE;
	if (log_name(b, bn))
		c |= RPT_PATH_LOG;
	else if (ckpt_name(p, n, b, bn))
		c |= RPT_PATH_CKPT;
	return c;
}

enum rpt_role rpt_role_decide(unsigned pc, const struct rpt_role_facts *x)
{
	if ((pc & RPT_PATH_PSEUDO) || x->special)
		return RPT_ROLE_OTHER;
	/* code by its path, or because it was executed (a program, a library) */
	if ((pc & RPT_PATH_CODE) || x->exec_mapped)
		return RPT_ROLE_CODE;
	if (!x->wbytes)
		/* shared-memory segments in /dev/shm move no bytes through calls */
		return (pc & RPT_PATH_SHM) && !x->rbytes ? RPT_ROLE_OTHER : RPT_ROLE_DATA;
	if (x->read_after_write)
		return RPT_ROLE_DATA;
	if (x->stdio || (pc & RPT_PATH_LOG))
		return RPT_ROLE_OTHER;
	if (x->big_bursts && (x->synced || x->recurring || x->rewrites >= 2 ||
			      (pc & RPT_PATH_CKPT)))
		return RPT_ROLE_CHECKPOINT;
	return RPT_ROLE_OTHER;
}

int rpt_path_pattern_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i = 0, j = 0;

	while (i < alen && j < blen) {
		if (is_digit(a[i]) && is_digit(b[j])) {
			while (i < alen && is_digit(a[i]))
				i++;
			while (j < blen && is_digit(b[j]))
				j++;
			continue;
		}
		if (a[i] != b[j])
			return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
		i++;
		j++;
	}
	return (i < alen) - (j < blen);
}

static int cmp_pattern(const void *pa, const void *pb, void *arg)
{
	const struct rpt_model *m = arg;
	const struct rpt_file *a = &m->files[*(const size_t *)pa];
	const struct rpt_file *b = &m->files[*(const size_t *)pb];

	return rpt_path_pattern_cmp(a->path, a->path_len, b->path, b->path_len);
}

static void facts_of(const struct rpt_file *f, struct rpt_role_facts *x)
{
	memset(x, 0, sizeof(*x));
	x->rbytes = f->rbytes;
	x->wbytes = f->wbytes;
	x->big_bursts = f->big_bursts;
	x->rewrites = f->rewrites;
	x->read_after_write = f->rd_after_wr;
	x->synced = f->syncs > 0;
	x->stdio = f->stdio;
	x->special = f->special;
	x->exec_mapped = f->exec_mapped;
}

/* Written files that could be checkpoints and share a name pattern with
 * another such file: marked in rec[]. */
static int mark_recurring(struct rpt_model *m, const unsigned char *cls, bool *rec)
{
	size_t *c = malloc((m->nfiles + 1) * sizeof(*c)), n = 0;

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < m->nfiles; i++) {
		const struct rpt_file *f = &m->files[i];

		if (f->big_bursts && !f->rd_after_wr && !f->stdio && !f->special &&
		    !(cls[i] & (RPT_PATH_CODE | RPT_PATH_PSEUDO | RPT_PATH_LOG)))
			c[n++] = i;
	}
	if (n > 1)
		qsort_r(c, n, sizeof(*c), cmp_pattern, m);
	for (size_t i = 0; i + 1 < n; i++)
		if (!cmp_pattern(&c[i], &c[i + 1], m))
			rec[c[i]] = rec[c[i + 1]] = true;
	free(c);
	return 0;
}

int rpt_roles(struct rpt_model *m)
{
	unsigned char *cls = calloc(m->nfiles + 1, 1);
	bool *rec = calloc(m->nfiles + 1, sizeof(*rec));
	size_t k = 0;

	if (!cls || !rec) {
		free(cls);
		free(rec);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nfiles; i++)
		cls[i] = (unsigned char)rpt_path_class(m->files[i].path, m->files[i].path_len);
	if (mark_recurring(m, cls, rec)) {
		free(cls);
		free(rec);
		return -ENOMEM;
	}
	memset(m->roles, 0, sizeof(m->roles));
	for (size_t i = 0; i < m->nfiles; i++) {
		struct rpt_file *f = &m->files[i];
		struct rpt_role_sum *s;
		struct rpt_role_facts x;

		facts_of(f, &x);
		x.recurring = rec[i];
		f->role = (uint8_t)rpt_role_decide(cls[i], &x);
		s = &m->roles[f->role];
		s->files++;
		s->rbytes += f->rbytes;
		s->wbytes += f->wbytes;
		s->rtime += f->rtime;
	}
	/* every write burst >= RPT_CKPT_MIN_BYTES was kept; only checkpoints' stay */
	for (size_t i = 0; i < m->nckpts; i++)
		if (m->files[m->ckpts[i].file].role == RPT_ROLE_CHECKPOINT)
			m->ckpts[k++] = m->ckpts[i];
	m->nckpts = k;
	free(cls);
	free(rec);
	return 0;
}

// SPDX-License-Identifier: MIT
/* job_identity.c — Slurm / Kubernetes / systemd identity of a cgroup path. See job_identity.h. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "lib/job_identity.h"

const char *const job_identity_keys[JOB_IDENTITY_NFIELDS] = {
	"slurm_job", "slurm_step", "k8s_pod_uid", "k8s_qos", "container_id", "unit",
};

const char *job_identity__field(const struct job_identity *id, int i)
{
	switch (i) {
	case 0: return id->slurm_job;
	case 1: return id->slurm_step;
	case 2: return id->k8s_pod_uid;
	case 3: return id->k8s_qos;
	case 4: return id->container_id;
	case 5: return id->unit;
	}
	return "";
}

static bool starts(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && !memcmp(s, p, k);
}

static bool ends(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && !memcmp(s + n - k, p, k);
}

static void put(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = 0;
}

/* n chars of s all from set (and n > 0) */
static bool all_of(const char *s, size_t n, int (*is)(int))
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is((unsigned char)s[i]))
			return false;
	return true;
}

static int is_step(int c)
{
	return isalnum(c) || c == '_';
}

static int is_uid(int c)
{
	return isxdigit(c) || c == '-' || c == '_';
}

/* A container id: 12..64 hex digits. */
static bool container_hex(const char *s, size_t n)
{
	return n >= 12 && n <= 64 && all_of(s, n, isxdigit);
}

/* "<runtime>-<hex>.scope" (docker, cri-containerd, crio, libpod): the hex id. */
static bool container_scope(const char *s, size_t n, const char **id, size_t *idn)
{
	const char *dash;

	if (!ends(s, n, ".scope") || starts(s, n, "crio-conmon-"))
		return false;
	n -= 6;
	dash = memrchr(s, '-', n);
	if (!dash)
		return false;
	*id = dash + 1;
	*idn = n - (size_t)(*id - s);
	return container_hex(*id, *idn);
}

static void set_uid(struct job_identity *o, const char *s, size_t n)
{
	put(o->k8s_pod_uid, sizeof(o->k8s_pod_uid), s, n);
	for (char *c = o->k8s_pod_uid; *c; c++)    /* systemd slices escape '-' as '_' */
		if (*c == '_')
			*c = '-';
}

static void set_qos(struct job_identity *o, const char *s, size_t n)
{
	if ((n == 9 && !memcmp(s, "burstable", 9)) || (n == 10 && !memcmp(s, "besteffort", 10)))
		put(o->k8s_qos, sizeof(o->k8s_qos), s, n);
}

bool job_identity__parse(const char *path, struct job_identity *o)
{
	bool kube = false;
	const char *c = path;

	memset(o, 0, sizeof(*o));
	while (c && *c) {
		const char *e, *id;
		size_t n, idn;

		while (*c == '/')
			c++;
		e = strchr(c, '/');
		n = e ? (size_t)(e - c) : strlen(c);
		if (!n)
			break;
		if (starts(c, n, "job_") && all_of(c + 4, n - 4, isdigit)) {
			put(o->slurm_job, sizeof(o->slurm_job), c + 4, n - 4);
			o->slurm_step[0] = 0;
		} else if (o->slurm_job[0] && starts(c, n, "step_") && all_of(c + 5, n - 5, is_step)) {
			put(o->slurm_step, sizeof(o->slurm_step), c + 5, n - 5);
		} else if ((n == 8 && !memcmp(c, "kubepods", 8)) || (n == 14 && !memcmp(c, "kubepods.slice", 14))) {
			kube = true;
		} else if (kube && starts(c, n, "kubepods-") && ends(c, n, ".slice")) {
			/* kubepods-<qos>.slice, kubepods[-<qos>]-pod<uid>.slice */
			const char *pod = memmem(c + 8, n - 8, "-pod", 4), *end = c + n - 6;

			if (pod && all_of(pod + 4, (size_t)(end - pod - 4), is_uid))
				set_uid(o, pod + 4, (size_t)(end - pod - 4));
			if (!pod || pod > c + 8)
				set_qos(o, c + 9, (size_t)((pod ? pod : end) - c - 9));
		} else if (kube && starts(c, n, "pod") && all_of(c + 3, n - 3, is_uid)) {
			set_uid(o, c + 3, n - 3);
		} else if (kube && !o->k8s_pod_uid[0]) {
			set_qos(o, c, n);               /* cgroupfs: /kubepods/<qos>/pod… */
		} else if (container_scope(c, n, &id, &idn)) {
			put(o->container_id, sizeof(o->container_id), id, idn);
		} else if (container_hex(c, n) || (starts(c, n, "crio-") && container_hex(c + 5, n - 5))) {
			if (kube || strstr(path, "/docker/") || !strncmp(path, "/docker/", 8))
				put(o->container_id, sizeof(o->container_id),
				    starts(c, n, "crio-") ? c + 5 : c, starts(c, n, "crio-") ? n - 5 : n);
		} else if (ends(c, n, ".service") || ends(c, n, ".scope")) {
			put(o->unit, sizeof(o->unit), c, n);
		} else if (starts(c, n, "user-") && ends(c, n, ".slice") && all_of(c + 5, n - 11, isdigit)) {
			if (!o->unit[0])
				put(o->unit, sizeof(o->unit), c, n);
		}
		c = e;
	}
	if (o->k8s_pod_uid[0] && !o->k8s_qos[0])
		snprintf(o->k8s_qos, sizeof(o->k8s_qos), "guaranteed");
	if (!o->k8s_pod_uid[0])
		o->k8s_qos[0] = 0;
	for (int i = 0; i < JOB_IDENTITY_NFIELDS; i++)
		if (job_identity__field(o, i)[0])
			return true;
	return false;
}

bool job_identity__pick(const char *text, char *out, size_t len)
{
	const char *line = text, *v2 = NULL, *first = NULL;
	size_t v2n = 0, firstn = 0;

	out[0] = 0;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		/* "ID:CONTROLLERS:PATH" */
		const char *c1 = memchr(line, ':', n);
		const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line)) : NULL;

		if (c2) {
			const char *p = c2 + 1;
			size_t pn = n - (size_t)(p - line);
			char buf[512];
			struct job_identity id;

			put(buf, sizeof(buf), p, pn);
			if (job_identity__parse(buf, &id) && (id.slurm_job[0] || id.k8s_pod_uid[0] ||
							     id.container_id[0])) {
				put(out, len, p, pn);
				return true;
			}
			if (c1 == line + 1 && line[0] == '0' && c2 == c1 + 1 && !v2) {  /* "0::/path" */
				v2 = p;
				v2n = pn;
			}
			if (!first) {
				first = p;
				firstn = pn;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	if (v2)
		put(out, len, v2, v2n);
	else if (first)
		put(out, len, first, firstn);
	return out[0] != 0;
}

size_t job_identity__format(const struct job_identity *id, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = 0;
	for (int i = 0; i < JOB_IDENTITY_NFIELDS; i++) {
		const char *v = job_identity__field(id, i);
		int k;

		if (!v[0] || n >= len)
			continue;
		k = snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "", job_identity_keys[i], v);
		n = k < 0 ? n : n + (size_t)k;
	}
	return n < len ? n : (len ? len - 1 : 0);
}

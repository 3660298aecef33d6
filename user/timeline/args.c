// SPDX-License-Identifier: MIT
/*
 * args.c — typed args (struct tl_args): what a slice carries, filled by the
 * model, rendered by each writer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "timeline/timeline.h"
#include "timeline/timeline_priv.h"

/* ---- args ---- */

struct tl_arg *tl_arg_add(struct tl_args *a, const char *key, uint8_t type)
{
	struct tl_arg *g;

	/* the lists are fixed by the code below: never more than TL_ARGS_MAX */
	if (a->n >= TL_ARGS_MAX)
		a->n = TL_ARGS_MAX - 1;
	g = &a->a[a->n++];
	g->key = key;
	g->type = type;
	g->intern = false;
	g->stable = false;
	g->len = 0;
	return g;
}

void tl_arg_u64(struct tl_args *a, const char *k, uint64_t v) { tl_arg_add(a, k, TLA_U64)->v.u = v; }
void tl_arg_s64(struct tl_args *a, const char *k, int64_t v) { tl_arg_add(a, k, TLA_S64)->v.s = v; }
void tl_arg_bool(struct tl_args *a, const char *k, bool v) { tl_arg_add(a, k, TLA_BOOL)->v.b = v; }
void tl_arg_us(struct tl_args *a, const char *k, int64_t ns) { tl_arg_add(a, k, TLA_US)->v.s = ns; }
void tl_arg_null(struct tl_args *a, const char *k) { tl_arg_add(a, k, TLA_NULL); }

void tl_arg_str(struct tl_args *a, const char *k, const char *s, size_t len, bool intern)
{
	struct tl_arg *g = tl_arg_add(a, k, TLA_STR);

	g->v.str = s;
	g->len = (uint32_t)len;
	g->intern = intern;
}

/* A string that lives in the args' scratch space (formatted names). */
void tl_arg_copy(struct tl_args *a, const char *k, const char *s, bool intern)
{
	size_t n = strlen(s);
	char *d;

	if (a->used + n + 1 > sizeof(a->scratch))
		n = a->used + 1 < sizeof(a->scratch) ? sizeof(a->scratch) - a->used - 1 : 0;
	d = a->scratch + a->used;
	memcpy(d, s, n);
	d[n] = 0;
	a->used += n + 1;
	tl_arg_str(a, k, d, n, intern);
}

void tl_args_reset(struct tl_args *a)
{
	a->n = 0;
	a->used = 0;
}

void tl_arg_cstr(struct tl_args *a, const char *k, const char *s)
{
	tl_arg_str(a, k, s, strlen(s), true);
	a->a[a->n - 1].stable = true;
}

void tl_arg_f3(struct tl_args *a, const char *k, double v)
{
	char buf[64];

	/* what JSON prints is what protobuf carries */
	snprintf(buf, sizeof(buf), "%.3f", v);
	tl_arg_add(a, k, TLA_F3)->v.d = strtod(buf, NULL);
}

void tl_arg_name(struct tl_args *a, const char *k, const char *const *tab, size_t ntab,
		     unsigned v)
{
	char buf[24];

	if (v < ntab && tab[v]) {
		tl_arg_cstr(a, k, tab[v]);
		return;
	}
	snprintf(buf, sizeof(buf), "%u", v);
	tl_arg_copy(a, k, buf, true);
}

void tl_arg_hex(struct tl_args *a, const char *k, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	tl_arg_copy(a, k, buf, false);
}

/* A thread-state interval: the CPU it ran on, or how its sleep ended, and
 * where in the program its switch-out was (--stacks). */
void tl_model__tstate_args(struct tl_model *m, const struct tstate_iv *iv, struct tl_args *a)
{
	tl_args_reset(a);
	tl_arg_u64(a, "tid", iv->tid);
	if (iv->state == TS_RUNNING)
		tl_arg_u64(a, "cpu", iv->cpu);
	if (iv->assumed)        /* its switch-in was not recorded (sched_gaps) */
		tl_arg_bool(a, "start_assumed", true);
	if (iv->state == TS_SLEEPING || iv->state == TS_BLOCKED)
		tl_arg_u64(a, "kernel_state", iv->raw_state & 0xffff);
	if (iv->woken) {
		tl_arg_u64(a, "waker_tid", iv->waker_tid ? tl_pid(m, iv->waker_tid) : 0);
		tl_arg_u64(a, "waker_pid", iv->waker_tid ? tl_pid(m, iv->waker_pid) : 0);
		tl_arg_bool(a, "waker_traced", iv->waker_traced);
		if (iv->waker_seq)
			tl_arg_u64(a, "waker_call_seq", iv->waker_seq);
	}
	tl_stacks__state_args(m, iv, a);
}

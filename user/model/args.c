// SPDX-License-Identifier: MIT
/*
 * args.c — typed args (struct exp_args): what a slice carries, filled by the
 * model, rendered by each writer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "model/model.h"
#include "model/model_priv.h"

/* ---- args ---- */

struct exp_arg *arg_add(struct exp_args *a, const char *key, uint8_t type)
{
	struct exp_arg *g;

	/* the lists are fixed by the code below: never more than EXP_ARGS_MAX */
	if (a->n >= EXP_ARGS_MAX)
		a->n = EXP_ARGS_MAX - 1;
	g = &a->a[a->n++];
	g->key = key;
	g->type = type;
	g->intern = false;
	g->stable = false;
	g->len = 0;
	return g;
}

void arg_u64(struct exp_args *a, const char *k, uint64_t v) { arg_add(a, k, EA_U64)->v.u = v; }
void arg_s64(struct exp_args *a, const char *k, int64_t v) { arg_add(a, k, EA_S64)->v.s = v; }
void arg_bool(struct exp_args *a, const char *k, bool v) { arg_add(a, k, EA_BOOL)->v.b = v; }
void arg_us(struct exp_args *a, const char *k, int64_t ns) { arg_add(a, k, EA_US)->v.s = ns; }
void arg_null(struct exp_args *a, const char *k) { arg_add(a, k, EA_NULL); }

void arg_str(struct exp_args *a, const char *k, const char *s, size_t len, bool intern)
{
	struct exp_arg *g = arg_add(a, k, EA_STR);

	g->v.str = s;
	g->len = (uint32_t)len;
	g->intern = intern;
}

/* A string that lives in the args' scratch space (formatted names). */
void arg_copy(struct exp_args *a, const char *k, const char *s, bool intern)
{
	size_t n = strlen(s);
	char *d;

	if (a->used + n + 1 > sizeof(a->scratch))
		n = a->used + 1 < sizeof(a->scratch) ? sizeof(a->scratch) - a->used - 1 : 0;
	d = a->scratch + a->used;
	memcpy(d, s, n);
	d[n] = 0;
	a->used += n + 1;
	arg_str(a, k, d, n, intern);
}

void args_reset(struct exp_args *a)
{
	a->n = 0;
	a->used = 0;
}

void arg_cstr(struct exp_args *a, const char *k, const char *s)
{
	arg_str(a, k, s, strlen(s), true);
	a->a[a->n - 1].stable = true;
}

void arg_f3(struct exp_args *a, const char *k, double v)
{
	char buf[64];

	/* what JSON prints is what protobuf carries */
	snprintf(buf, sizeof(buf), "%.3f", v);
	arg_add(a, k, EA_F3)->v.d = strtod(buf, NULL);
}

void arg_name(struct exp_args *a, const char *k, const char *const *tab, size_t ntab,
		     unsigned v)
{
	char buf[24];

	if (v < ntab && tab[v]) {
		arg_cstr(a, k, tab[v]);
		return;
	}
	snprintf(buf, sizeof(buf), "%u", v);
	arg_copy(a, k, buf, true);
}

void arg_hex(struct exp_args *a, const char *k, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	arg_copy(a, k, buf, false);
}

/* A thread-state interval: the CPU it ran on, or how its sleep ended. */
void exp_model__tstate_args(const struct exp_model *m, const struct tstate_iv *iv, struct exp_args *a)
{
	args_reset(a);
	arg_u64(a, "tid", iv->tid);
	if (iv->state == TS_RUNNING)
		arg_u64(a, "cpu", iv->cpu);
	if (iv->assumed)        /* its switch-in was not recorded (sched_gaps) */
		arg_bool(a, "start_assumed", true);
	if (iv->state == TS_SLEEPING || iv->state == TS_BLOCKED)
		arg_u64(a, "kernel_state", iv->raw_state & 0xffff);
	if (iv->woken) {
		arg_u64(a, "waker_tid", iv->waker_tid ? exp_pid(m, iv->waker_tid) : 0);
		arg_u64(a, "waker_pid", iv->waker_tid ? exp_pid(m, iv->waker_pid) : 0);
		arg_bool(a, "waker_traced", iv->waker_traced);
		if (iv->waker_seq)
			arg_u64(a, "waker_call_seq", iv->waker_seq);
	}
}

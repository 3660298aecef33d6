// SPDX-License-Identifier: MIT
/*
 * findings.c — the report's findings as tracks (findings.h): growing them
 * and freeing them; what goes in is the report's (report_findings.c).
 */
#include <stdlib.h>
#include <string.h>
#include "lib/kmap.h"
#include "model/findings.h"

struct finding_track *findings__track(struct findings *f, enum finding_track_kind kind)
{
	struct finding_track *t, *n = realloc(f->t, (f->n + 1) * sizeof(*f->t));

	if (!n)
		return NULL;
	f->t = n;
	t = &f->t[f->n++];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->thread = "";
	return t;
}

struct finding_slice *findings__slice(struct finding_track *t)
{
	struct finding_slice *s;

	if (array_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return NULL;
	s = &t->v[t->n++];
	memset(s, 0, sizeof(*s));
	return s;
}

void findings__free(struct findings *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		free(f->t[i].v);
	free(f->t);
	f->t = NULL;
	f->n = 0;
}

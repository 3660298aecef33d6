// SPDX-License-Identifier: MIT
/*
 * mcp_emit.c — parts of a report's JSON written again, compact and bounded:
 * strings decoded by json_read and escaped again by json_writer (so any
 * byte the report holds comes out as valid JSON and UTF-8, on one line),
 * numbers as their text, arrays cut with a note saying what was left out.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "mcp/mcp_priv.h"

void mcp_emit__note(struct mcp_emit *e, const char *fmt, ...)
{
	va_list ap;

	if (e->nnotes >= MCP_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(e->notes[e->nnotes++], sizeof(e->notes[0]), fmt, ap);
	va_end(ap);
}

const struct json_node *mcp_emit__at(const struct json_doc *d, const struct json_node *o,
				     const char *path)
{
	char part[64];

	while (o && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(part))
			return NULL;
		memcpy(part, path, n);
		part[n] = 0;
		o = json_get(d, o, part);
		path += n + (path[n] == '.');
	}
	return o;
}

void mcp_emit__key(struct mcp_emit *e, bool *first, const char *key)
{
	if (!*first)
		json_writer__putc(e->w, ',');
	*first = false;
	json_writer__cstr(e->w, key);
	json_writer__putc(e->w, ':');
}

static void emit_str(struct mcp_emit *e, const struct json_node *n, const char *name)
{
	size_t len = n->n;

	if (len > MCP_MAX_STR) {
		len = json_utf8_cut(n->s, n->n, MCP_MAX_STR);
		mcp_emit__note(e, "%s: a string cut at %zu of its %u bytes", name ? name : "?", len,
			       n->n);
	}
	json_writer__str(e->w, n->s, len);
}

static void emit_array(struct mcp_emit *e, const struct json_node *n, const char *name,
		       unsigned max, const struct mcp_pick *each)
{
	unsigned i = 0;

	if (!max)
		max = MCP_MAX_ITEMS;
	json_writer__putc(e->w, '[');
	for (const struct json_node *m = json_first(e->d, n); m && i < max; m = json_next(e->d, m)) {
		if (i++)
			json_writer__putc(e->w, ',');
		if (each && m->type == JSON_OBJECT) {
			bool first = true;

			json_writer__putc(e->w, '{');
			mcp_emit__picks(e, m, each, &first);
			json_writer__putc(e->w, '}');
		} else {
			mcp_emit__node(e, m, name, 0);
		}
	}
	json_writer__putc(e->w, ']');
	if (n->n > max)
		mcp_emit__note(e, "%s: %u of %u shown", name ? name : "?", max, n->n);
}

void mcp_emit__node(struct mcp_emit *e, const struct json_node *n, const char *name, unsigned max)
{
	const char *t;
	size_t len;
	bool first = true;

	switch (n->type) {
	case JSON_NULL:
		json_writer__puts(e->w, "null");
		break;
	case JSON_BOOL:
		json_writer__bool(e->w, n->b);
		break;
	case JSON_NUMBER:
		t = json_node__text(e->d, n, &len);
		json_writer__raw(e->w, t, len);
		break;
	case JSON_STRING:
		emit_str(e, n, name);
		break;
	case JSON_ARRAY:
		emit_array(e, n, name, max, NULL);
		break;
	default:
		json_writer__putc(e->w, '{');
		for (const struct json_node *m = json_first(e->d, n); m; m = json_next(e->d, m)) {
			if (!first)
				json_writer__putc(e->w, ',');
			first = false;
			json_writer__str(e->w, m->key, m->klen);
			json_writer__putc(e->w, ':');
			mcp_emit__node(e, m, m->key, 0);
		}
		json_writer__putc(e->w, '}');
	}
}

void mcp_emit__picks(struct mcp_emit *e, const struct json_node *o, const struct mcp_pick *picks,
		     bool *first)
{
	for (const struct mcp_pick *p = picks; p->path; p++) {
		const struct json_node *v = mcp_emit__at(e->d, o, p->path);
		const char *as = p->as;

		if (!v)
			continue;       /* a report from before (or after) this member */
		if (!as) {
			as = strrchr(p->path, '.');
			as = as ? as + 1 : p->path;
		}
		mcp_emit__key(e, first, as);
		if (p->count)
			json_writer__u64(e->w, v->type == JSON_ARRAY || v->type == JSON_OBJECT ? v->n : 0);
		else if (v->type == JSON_ARRAY)
			emit_array(e, v, as, p->max, p->each);
		else if (v->type == JSON_OBJECT && p->each) {
			bool f = true;

			json_writer__putc(e->w, '{');
			mcp_emit__picks(e, v, p->each, &f);
			json_writer__putc(e->w, '}');
		} else {
			mcp_emit__node(e, v, as, p->max);
		}
	}
}

void mcp_emit__notes(struct mcp_emit *e, bool *first)
{
	if (!e->nnotes)
		return;
	mcp_emit__key(e, first, "truncated");
	json_writer__putc(e->w, '[');
	for (unsigned i = 0; i < e->nnotes; i++) {
		if (i)
			json_writer__putc(e->w, ',');
		json_writer__cstr(e->w, e->notes[i]);
	}
	json_writer__putc(e->w, ']');
}

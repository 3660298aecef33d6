// SPDX-License-Identifier: MIT
/*
 * json_read.c — a JSON text into a tree of nodes (json_read.h): one
 * recursive-descent pass, nodes in one growable array (members linked by
 * index), decoded strings in one arena no larger than the text.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/json_read.h"
#include "lib/kmap.h"

struct json_doc {
	const char *text;
	size_t len;
	struct json_node *nodes;
	size_t nnodes, cnodes;
	char *arena;            /* decoded strings */
	size_t used, cap;
};

struct jr {
	struct json_doc *d;
	size_t pos;
	char *err;
	size_t errlen;
	bool failed;
};

static void fail(struct jr *r, size_t at, const char *what)
{
	size_t line = 1, col = 1;

	if (r->failed)
		return;
	r->failed = true;
	for (size_t i = 0; i < at && i < r->d->len; i++) {
		if (r->d->text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (at >= r->d->len)
		snprintf(r->err, r->errlen, "unexpected end of the text (byte %zu, line %zu): %s",
			 at, line, what);
	else
		snprintf(r->err, r->errlen, "line %zu, column %zu (byte %zu): %s", line, col, at,
			 what);
}

static void skip_ws(struct jr *r)
{
	const char *t = r->d->text;

	while (r->pos < r->d->len &&
	       (t[r->pos] == ' ' || t[r->pos] == '\t' || t[r->pos] == '\n' || t[r->pos] == '\r'))
		r->pos++;
}

/* A new node; its index + 1 (0: out of memory, said). */
static uint32_t new_node(struct jr *r, uint8_t type)
{
	struct json_doc *d = r->d;

	if (d->nnodes >= UINT32_MAX - 1 ||
	    array_grow((void **)&d->nodes, &d->cnodes, d->nnodes + 1, sizeof(*d->nodes))) {
		fail(r, r->pos, "out of memory");
		return 0;
	}
	memset(&d->nodes[d->nnodes], 0, sizeof(d->nodes[0]));
	d->nodes[d->nnodes].type = type;
	d->nodes[d->nnodes].off = r->pos;
	return (uint32_t)++d->nnodes;
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * The string at r->pos (at its opening quote), decoded into the arena: its
 * offset there, *n its bytes. The arena was sized for the whole text, and
 * no escape decodes longer than it is written, so it never moves.
 */
static size_t read_string(struct jr *r, uint32_t *n)
{
	struct json_doc *d = r->d;
	const char *t = d->text;
	size_t start = d->used, i = r->pos + 1;
	char *o = d->arena + d->used;

	for (;;) {
		unsigned char c;

		if (i >= d->len) {
			fail(r, i, "a string is not closed");
			return 0;
		}
		c = (unsigned char)t[i];
		if (c == '"')
			break;
		if (c < 0x20) {
			fail(r, i, "a control character inside a string");
			return 0;
		}
		if (c != '\\') {
			*o++ = (char)c;
			i++;
			continue;
		}
		if (i + 1 >= d->len) {
			fail(r, i + 1, "an escape is cut");
			return 0;
		}
		switch (t[i + 1]) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;

			if (i + 6 > d->len || hex4(t + i + 2, &cp)) {
				fail(r, i, "a \\u escape needs 4 hex digits");
				return 0;
			}
			i += 6;
			if (cp >= 0xd800 && cp < 0xdc00 && i + 6 <= d->len && t[i] == '\\' &&
			    t[i + 1] == 'u' && !hex4(t + i + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd;    /* a lone surrogate */
			}
			o += put_utf8(o, cp);
			continue;
		}
		default:
			fail(r, i, "an unknown escape in a string");
			return 0;
		}
		i += 2;
	}
	*n = (uint32_t)(o - (d->arena + start));
	*o++ = 0;
	d->used = (size_t)(o - d->arena);
	r->pos = i + 1;
	return start;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int read_number(struct jr *r)
{
	const char *t = r->d->text;
	size_t i = r->pos, n = r->d->len;

	if (i < n && t[i] == '-')
		i++;
	if (i < n && t[i] == '0') {
		i++;
	} else if (i < n && is_digit(t[i])) {
		while (i < n && is_digit(t[i]))
			i++;
	} else {
		fail(r, i, "expected a value");
		return -1;
	}
	if (i < n && t[i] == '.') {
		i++;
		if (i >= n || !is_digit(t[i])) {
			fail(r, i, "expected a digit after the decimal point");
			return -1;
		}
		while (i < n && is_digit(t[i]))
			i++;
	}
	if (i < n && (t[i] == 'e' || t[i] == 'E')) {
		i++;
		if (i < n && (t[i] == '+' || t[i] == '-'))
			i++;
		if (i >= n || !is_digit(t[i])) {
			fail(r, i, "expected a digit in the exponent");
			return -1;
		}
		while (i < n && is_digit(t[i]))
			i++;
	}
	r->pos = i;
	return 0;
}

static bool literal(struct jr *r, const char *word)
{
	size_t l = strlen(word);

	if (r->pos + l > r->d->len || memcmp(r->d->text + r->pos, word, l))
		return false;
	r->pos += l;
	return true;
}

static uint32_t parse_value(struct jr *r, unsigned depth);

/* The members of an array or object node (index + 1 = id), r->pos after its opener. */
static int parse_members(struct jr *r, uint32_t id, bool object, unsigned depth)
{
	struct json_doc *d = r->d;
	uint32_t last = 0, count = 0;
	char close = object ? '}' : ']';

	skip_ws(r);
	if (r->pos < d->len && d->text[r->pos] == close) {
		r->pos++;
		return 0;
	}
	for (;;) {
		size_t koff = 0;
		uint32_t klen = 0, v;

		skip_ws(r);
		if (object) {
			if (r->pos >= d->len || d->text[r->pos] != '"') {
				fail(r, r->pos, "expected a member name in quotes");
				return -1;
			}
			koff = read_string(r, &klen);
			if (r->failed)
				return -1;
			skip_ws(r);
			if (r->pos >= d->len || d->text[r->pos] != ':') {
				fail(r, r->pos, "expected ':' after a member name");
				return -1;
			}
			r->pos++;
			skip_ws(r);
		}
		v = parse_value(r, depth + 1);
		if (!v)
			return -1;
		if (object) {
			d->nodes[v - 1].key = (const char *)(uintptr_t)(koff + 1); /* fixed up at the end */
			d->nodes[v - 1].klen = klen;
		}
		if (last)
			d->nodes[last - 1].next = v;
		else
			d->nodes[id - 1].child = v;
		last = v;
		count++;
		skip_ws(r);
		if (r->pos < d->len && d->text[r->pos] == ',') {
			r->pos++;
			continue;
		}
		if (r->pos < d->len && d->text[r->pos] == close) {
			r->pos++;
			break;
		}
		fail(r, r->pos, object ? "expected ',' or '}'" : "expected ',' or ']'");
		return -1;
	}
	d->nodes[id - 1].n = count;
	return 0;
}

static uint32_t parse_value(struct jr *r, unsigned depth)
{
	struct json_doc *d = r->d;
	uint32_t id;
	char c;

	if (depth > JSON_READ_MAX_DEPTH) {
		fail(r, r->pos, "nested too deep");
		return 0;
	}
	skip_ws(r);
	if (r->pos >= d->len) {
		fail(r, r->pos, "expected a value");
		return 0;
	}
	c = d->text[r->pos];
	switch (c) {
	case '{':
	case '[':
		id = new_node(r, c == '{' ? JSON_OBJECT : JSON_ARRAY);
		if (!id)
			return 0;
		r->pos++;
		if (parse_members(r, id, c == '{', depth))
			return 0;
		break;
	case '"': {
		uint32_t n = 0;
		size_t off;

		id = new_node(r, JSON_STRING);
		if (!id)
			return 0;
		off = read_string(r, &n);
		if (r->failed)
			return 0;
		d->nodes[id - 1].s = (const char *)(uintptr_t)(off + 1);        /* fixed up */
		d->nodes[id - 1].n = n;
		break;
	}
	case 't':
	case 'f':
	case 'n':
		id = new_node(r, c == 'n' ? JSON_NULL : JSON_BOOL);
		if (!id)
			return 0;
		if (literal(r, "true")) {
			d->nodes[id - 1].b = true;
		} else if (literal(r, "false")) {
			d->nodes[id - 1].b = false;
		} else if (!literal(r, "null")) {
			fail(r, r->pos, "expected a value");
			return 0;
		}
		break;
	default:
		id = new_node(r, JSON_NUMBER);
		if (!id || read_number(r))
			return 0;
		break;
	}
	d->nodes[id - 1].len = r->pos - d->nodes[id - 1].off;
	return id;
}

int json_doc__parse(const char *text, size_t len, struct json_doc **out, char *err, size_t errlen)
{
	struct json_doc *d = calloc(1, sizeof(*d));
	struct jr r = { .d = d, .err = err, .errlen = errlen };

	*out = NULL;
	if (errlen)
		err[0] = 0;
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->text = text;
	d->len = len;
	d->cap = len + 1;
	d->arena = malloc(d->cap);
	if (!d->arena) {
		free(d);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* a UTF-8 byte order mark is not JSON, but some writers put one */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		r.pos = 3;
	if (parse_value(&r, 0)) {
		skip_ws(&r);
		if (r.pos < len)
			fail(&r, r.pos, "text after the value");
	}
	if (r.failed) {
		int e = strstr(err, "out of memory") ? -ENOMEM : -EINVAL;

		json_doc__free(d);
		return e;
	}
	for (size_t i = 0; i < d->nnodes; i++) {
		struct json_node *n = &d->nodes[i];

		if (n->key)
			n->key = d->arena + ((uintptr_t)n->key - 1);
		if (n->type == JSON_STRING)
			n->s = d->arena + ((uintptr_t)n->s - 1);
		else if (n->type == JSON_NUMBER)
			n->s = d->text + n->off;
	}
	*out = d;
	return 0;
}

void json_doc__free(struct json_doc *d)
{
	if (!d)
		return;
	free(d->nodes);
	free(d->arena);
	free(d);
}

const struct json_node *json_doc__root(const struct json_doc *d)
{
	return d->nnodes ? &d->nodes[0] : NULL;
}

const struct json_node *json_first(const struct json_doc *d, const struct json_node *n)
{
	if (!n || (n->type != JSON_ARRAY && n->type != JSON_OBJECT) || !n->child)
		return NULL;
	return &d->nodes[n->child - 1];
}

const struct json_node *json_next(const struct json_doc *d, const struct json_node *n)
{
	return n && n->next ? &d->nodes[n->next - 1] : NULL;
}

const struct json_node *json_get(const struct json_doc *d, const struct json_node *o,
				 const char *key)
{
	const struct json_node *found = NULL;
	size_t kl = strlen(key);

	if (!o || o->type != JSON_OBJECT)
		return NULL;
	for (const struct json_node *m = json_first(d, o); m; m = json_next(d, m))
		if (m->klen == kl && !memcmp(m->key, key, kl))
			found = m;
	return found;
}

const char *json_node__text(const struct json_doc *d, const struct json_node *n, size_t *len)
{
	*len = n->len;
	return d->text + n->off;
}

int json_node__fixed(const struct json_node *n, unsigned scale, int64_t *out, bool *frac)
{
	const char *s, *end;
	bool neg = false, dropped = false, round_up = false;
	unsigned __int128 v = 0;
	long exp = 0, e10 = 0;
	int ndig = 0;

	if (!n || n->type != JSON_NUMBER)
		return -EINVAL;
	s = n->s;
	end = s + n->len;
	if (s < end && *s == '-') {
		neg = true;
		s++;
	}
	/* the exponent first: where the digits' point lands */
	for (const char *p = s; p < end; p++) {
		if (*p == 'e' || *p == 'E') {
			bool eneg = false;

			p++;
			if (p < end && (*p == '+' || *p == '-'))
				eneg = *p++ == '-';
			for (; p < end; p++) {
				if (e10 < 100000)
					e10 = e10 * 10 + (*p - '0');
			}
			if (eneg)
				e10 = -e10;
			break;
		}
	}
	/* digits d1 d2 ... with the point after `intdigits` of them */
	exp = (long)scale + e10;        /* the value is digits x 10^(exp - fraction digits) */
	{
		long frac_digits = 0;
		bool in_frac = false;

		for (const char *p = s; p < end && *p != 'e' && *p != 'E'; p++) {
			int dg;

			if (*p == '.') {
				in_frac = true;
				continue;
			}
			dg = *p - '0';
			if (in_frac)
				frac_digits++;
			/* a digit at 10^(exp - frac_digits) relative to the result's unit */
			if (exp - frac_digits < 0) {
				/* below the unit: the first such digit rounds, the rest only mark */
				if (exp - frac_digits == -1)
					round_up = dg >= 5;
				if (dg)
					dropped = true;
				continue;
			}
			v = v * 10 + (unsigned)dg;
			if (dg || v)
				ndig++;
			if (v > (unsigned __int128)INT64_MAX * 10)
				return -ERANGE;
		}
		/* digits above the unit that the text did not write: zeros */
		for (long k = exp - frac_digits; k > 0; k--) {
			v *= 10;
			if (v > (unsigned __int128)INT64_MAX + 1)
				return v ? -ERANGE : 0;
		}
	}
	if (round_up)
		v++;
	if (v > (unsigned __int128)INT64_MAX + (neg ? 1 : 0))
		return -ERANGE;
	*out = neg ? (int64_t)(0 - (uint64_t)v) : (int64_t)v;
	if (frac)
		*frac = dropped;
	(void)ndig;
	return 0;
}

int json_node__int(const struct json_node *n, int64_t *out)
{
	bool frac;
	int err;

	if (!n || n->type != JSON_NUMBER)
		return -EINVAL;
	for (size_t i = 0; i < n->len; i++)
		if (n->s[i] == '.' || n->s[i] == 'e' || n->s[i] == 'E')
			return -EINVAL;
	err = json_node__fixed(n, 0, out, &frac);
	return err;
}

double json_node__double(const struct json_node *n)
{
	char buf[64];

	if (!n || n->type != JSON_NUMBER || n->len >= sizeof(buf))
		return NAN;
	memcpy(buf, n->s, n->len);
	buf[n->len] = 0;
	return strtod(buf, NULL);
}

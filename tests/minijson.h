/* SPDX-License-Identifier: MIT */
/*
 * A tiny strict JSON reader for the tests: parses a whole document into a tree
 * (objects, arrays, strings, numbers, true/false/null) so that a test can check
 * that a report is valid JSON and read values out of it. Header-only, static
 * functions; not fast, not for production.
 */
#ifndef PA_MINIJSON_H
#define PA_MINIJSON_H

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	enum jtype type;
	bool b;
	double num;
	char *str;         /* J_STR */
	size_t n;          /* J_ARR, J_OBJ: number of items */
	struct jv **items; /* J_ARR, J_OBJ */
	char **keys;       /* J_OBJ */
};

struct jparser {
	const char *s;
	size_t pos;
	int depth;
	char *err;
	size_t errlen;
};

static struct jv *jparse_value(struct jparser *p);

static void jfree(struct jv *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jfree(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}

static struct jv *jerror(struct jparser *p, const char *what)
{
	if (p->err && p->err[0] == '\0')
		snprintf(p->err, p->errlen, "%s at offset %zu near \"%.20s\"", what, p->pos,
		         p->s + p->pos);
	return NULL;
}

static void jskip_ws(struct jparser *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
	       p->s[p->pos] == '\r')
		p->pos++;
}

static struct jv *jnew(enum jtype t)
{
	struct jv *v = calloc(1, sizeof *v);
	if (v)
		v->type = t;
	return v;
}

static char *jparse_string_raw(struct jparser *p)
{
	if (p->s[p->pos] != '"') {
		jerror(p, "expected a string");
		return NULL;
	}
	p->pos++;
	size_t cap = 16, len = 0;
	char *out = malloc(cap);
	for (;;) {
		unsigned char c = (unsigned char)p->s[p->pos];
		if (c == '\0' || c < 0x20) {
			free(out);
			jerror(p, "unterminated string or control character");
			return NULL;
		}
		p->pos++;
		if (c == '"')
			break;
		if (c == '\\') {
			char e = p->s[p->pos++];
			switch (e) {
			case '"':
				c = '"';
				break;
			case '\\':
				c = '\\';
				break;
			case '/':
				c = '/';
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'n':
				c = '\n';
				break;
			case 'r':
				c = '\r';
				break;
			case 't':
				c = '\t';
				break;
			case 'u':
				for (int i = 0; i < 4; i++) {
					if (!isxdigit((unsigned char)p->s[p->pos])) {
						free(out);
						jerror(p, "bad \\u escape");
						return NULL;
					}
					p->pos++;
				}
				c = '?'; /* the tests never need the code point */
				break;
			default:
				free(out);
				jerror(p, "bad escape");
				return NULL;
			}
		}
		if (len + 2 > cap) {
			cap *= 2;
			out = realloc(out, cap);
		}
		out[len++] = (char)c;
	}
	out[len] = '\0';
	return out;
}

static struct jv *jparse_number(struct jparser *p)
{
	const char *start = p->s + p->pos;
	const char *q = start;
	if (*q == '-')
		q++;
	if (*q == '0')
		q++;
	else if (isdigit((unsigned char)*q))
		while (isdigit((unsigned char)*q))
			q++;
	else
		return jerror(p, "bad number");
	if (*q == '.') {
		q++;
		if (!isdigit((unsigned char)*q))
			return jerror(p, "bad fraction");
		while (isdigit((unsigned char)*q))
			q++;
	}
	if (*q == 'e' || *q == 'E') {
		q++;
		if (*q == '+' || *q == '-')
			q++;
		if (!isdigit((unsigned char)*q))
			return jerror(p, "bad exponent");
		while (isdigit((unsigned char)*q))
			q++;
	}
	struct jv *v = jnew(J_NUM);
	v->num = strtod(start, NULL);
	p->pos += (size_t)(q - start);
	return v;
}

static bool jpush(struct jv *v, char *key, struct jv *item)
{
	struct jv **items = realloc(v->items, (v->n + 1) * sizeof *items);
	if (!items)
		return false;
	v->items = items;
	if (v->type == J_OBJ) {
		char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
		if (!keys)
			return false;
		v->keys = keys;
		v->keys[v->n] = key;
	}
	v->items[v->n++] = item;
	return true;
}

static struct jv *jparse_container(struct jparser *p, bool obj)
{
	char close = obj ? '}' : ']';
	struct jv *v = jnew(obj ? J_OBJ : J_ARR);
	p->pos++;
	jskip_ws(p);
	if (p->s[p->pos] == close) {
		p->pos++;
		return v;
	}
	for (;;) {
		char *key = NULL;
		jskip_ws(p);
		if (obj) {
			key = jparse_string_raw(p);
			if (!key)
				goto fail;
			jskip_ws(p);
			if (p->s[p->pos] != ':') {
				free(key);
				jerror(p, "expected ':'");
				goto fail;
			}
			p->pos++;
		}
		struct jv *item = jparse_value(p);
		if (!item) {
			free(key);
			goto fail;
		}
		jpush(v, key, item);
		jskip_ws(p);
		if (p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->s[p->pos] == close) {
			p->pos++;
			return v;
		}
		jerror(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		goto fail;
	}
fail:
	jfree(v);
	return NULL;
}

static struct jv *jparse_value(struct jparser *p)
{
	if (++p->depth > 64)
		return jerror(p, "nested too deep");
	jskip_ws(p);
	struct jv *v = NULL;
	char c = p->s[p->pos];
	if (c == '{' || c == '[') {
		v = jparse_container(p, c == '{');
	} else if (c == '"') {
		char *s = jparse_string_raw(p);
		if (s) {
			v = jnew(J_STR);
			v->str = s;
		}
	} else if (c == '-' || isdigit((unsigned char)c)) {
		v = jparse_number(p);
	} else if (!strncmp(p->s + p->pos, "true", 4) || !strncmp(p->s + p->pos, "false", 5)) {
		v = jnew(J_BOOL);
		v->b = c == 't';
		p->pos += v->b ? 4 : 5;
	} else if (!strncmp(p->s + p->pos, "null", 4)) {
		v = jnew(J_NULL);
		p->pos += 4;
	} else {
		jerror(p, "unexpected character");
	}
	p->depth--;
	return v;
}

/* Parse a whole document; NULL with a message in err when it is not valid JSON. */
static struct jv *jparse(const char *s, char *err, size_t errlen)
{
	struct jparser p = { .s = s, .err = err, .errlen = errlen };
	if (err && errlen)
		err[0] = '\0';
	struct jv *v = jparse_value(&p);
	if (!v)
		return NULL;
	jskip_ws(&p);
	if (p.s[p.pos] != '\0') {
		jfree(v);
		return jerror(&p, "trailing characters");
	}
	return v;
}

/* The member `key` of an object, or NULL. */
static struct jv *jget(const struct jv *obj, const char *key)
{
	if (!obj || obj->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}

/* Item i of an array, or NULL. */
static struct jv *jat(const struct jv *arr, size_t i)
{
	if (!arr || arr->type != J_ARR || i >= arr->n)
		return NULL;
	return arr->items[i];
}

/* A numeric member as an integer; `fallback` when missing or not a number. */
static int64_t jint(const struct jv *obj, const char *key, int64_t fallback)
{
	const struct jv *v = jget(obj, key);
	return v && v->type == J_NUM ? (int64_t)v->num : fallback;
}

/* A string member, or "" when missing. */
static const char *jstr(const struct jv *obj, const char *key)
{
	const struct jv *v = jget(obj, key);
	return v && v->type == J_STR ? v->str : "";
}

/* Keep -Wunused-function quiet in files that use only part of the reader. */
static inline void jsilence_unused(void)
{
	(void)jfree;
	(void)jparse;
	(void)jget;
	(void)jat;
	(void)jint;
	(void)jstr;
}

#endif

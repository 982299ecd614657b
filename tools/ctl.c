/* SPDX-License-Identifier: MIT */
/*
 * `pagealloc ctl`: a knob's value, or the whole tree with the values of a
 * freshly booted (and --ctl adjusted) pool. The tree comes from the
 * library's pa_ctl_entry() (what its "help" path prints), so a knob added
 * there is listed here unchanged; a path with <N> in it is listed once per N
 * that the pool accepts.
 */
#define _GNU_SOURCE
#include "cli.h"

#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The value of path in a malloc'd string, or NULL with *err set (-errno). */
static char *ctl_value(struct pa_pool *pool, const char *path, int *err)
{
	int n = pa_ctl_read(pool, path, NULL, 0);
	char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (n >= 0 && buf)
		n = pa_ctl_read(pool, path, buf, (size_t)n + 1);
	if (n < 0 || !buf) {
		*err = n < 0 ? n : -ENOMEM;
		free(buf);
		return NULL;
	}
	return buf;
}

/* A one-line value without its newline; false for a multi-line report. */
static bool one_line(char *v)
{
	char *nl = strchr(v, '\n');
	if (nl && nl[1])
		return false;
	if (nl)
		*nl = '\0';
	return true;
}

/* A knob's value is one word; anything longer is a report (even of one line). */
static bool is_scalar(char *v)
{
	return one_line(v) && !strpbrk(v, " \t");
}

static bool is_integer(const char *v)
{
	if (*v == '-')
		v++;
	if (!*v)
		return false;
	for (; *v; v++)
		if (*v < '0' || *v > '9')
			return false;
	return true;
}

/* A value as JSON: a number, a string, or null. */
static void json_value(FILE *out, const char *v)
{
	if (!v)
		fputs("null", out);
	else if (is_integer(v))
		fputs(v, out);
	else
		bench_json_string(out, v);
}

struct lister {
	struct pa_pool *pool;
	FILE *out;
	bool json;
	unsigned count;
};

/* One path: "PATH MODE VALUE", or a JSON member. */
static void list_one(struct lister *l, const char *path, const char *mode)
{
	int err = 0;
	char *v = strcmp(mode, "wo") ? ctl_value(l->pool, path, &err) : NULL;
	bool report = v && !is_scalar(v);
	if (l->json) {
		fprintf(l->out, "%s\n  ", l->count ? "," : "");
		bench_json_string(l->out, path);
		fprintf(l->out, ": {\"mode\": \"%s\", \"value\": ", mode);
		json_value(l->out, report ? NULL : v);
		fprintf(l->out, ", \"report\": %s}", report ? "true" : "false");
	} else {
		if (report)
			fprintf(l->out, "%-34s %-4s  (a report: pagealloc ctl %s)\n", path, mode,
			        path);
		else
			fprintf(l->out, "%-34s %-4s  %s\n", path, mode, v ? v : "-");
	}
	l->count++;
	free(v);
}

/* A path with <N>: once per N the pool takes (0, 1, ... until one is refused). */
static void list_numbered(struct lister *l, const char *tmpl, const char *mode)
{
	const char *at = strstr(tmpl, "<N>");
	if (!strcmp(mode, "wo")) {
		list_one(l, tmpl, mode);
		return;
	}
	for (unsigned n = 0;; n++) {
		char path[256];
		snprintf(path, sizeof path, "%.*s%u%s", (int)(at - tmpl), tmpl, n, at + 3);
		if (pa_ctl_read(l->pool, path, NULL, 0) < 0)
			break;
		list_one(l, path, mode);
	}
}

int cli_ctl_list(struct pa_pool *pool, bool json, FILE *out)
{
	struct lister l = { .pool = pool, .out = out, .json = json };
	struct pa_ctl_entry e;
	if (json)
		fputc('{', out);
	else
		fprintf(out, "%-34s %-4s  %s\n", "PATH", "MODE", "VALUE");
	for (unsigned i = 0; pa_ctl_entry(i, &e) == 0; i++) {
		if (strstr(e.path, "<N>"))
			list_numbered(&l, e.path, e.mode);
		else
			list_one(&l, e.path, e.mode);
	}
	if (json)
		fputs("\n}\n", out);
	return 0;
}

int cli_ctl_show(struct pa_pool *pool, const char *path, bool written, bool json, FILE *out)
{
	int err = 0;
	char *v = ctl_value(pool, path, &err);
	if (!v && err == -EPERM && written)
		return 0;
	if (!v) {
		fprintf(stderr, "pagealloc ctl: %s: %s (`pagealloc ctl` lists the paths)\n", path,
		        err == -EPERM ? "write-only" : bench_ctl_error(err));
		return -1;
	}
	if (json) {
		fputs("{\"path\": ", out);
		bench_json_string(out, path);
		fputs(", \"value\": ", out);
		if (one_line(v))
			json_value(out, v);
		else
			bench_json_string(out, v);
		fputs("}\n", out);
	} else {
		fputs(v, out);
	}
	free(v);
	return 0;
}

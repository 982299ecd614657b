/* SPDX-License-Identifier: MIT */
/*
 * `pagealloc replay` and `pagealloc compare`: options, and --compare's
 * configurations replayed in parallel processes (-j N), each writing its
 * JSON to a temporary file that the parent reads back.
 */
#define _GNU_SOURCE
#include "replay.h"

#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct replay_args {
	const char *path;
	struct rp_options opt;
	bool json;
	const char *series, *svg;
	const char *configs[32];
	unsigned nr_configs;
	unsigned jobs;
};

static void replay_usage(FILE *f)
{
	fprintf(f,
	        "usage: pagealloc replay PATH [options]\n"
	        "Replay a Linux ftrace page-allocator trace on a pool shaped like the traced\n"
	        "machine, side by side with the kernel's snapshots. PATH is a trace (text,\n"
	        ".xz or .gz; - for stdin) or a recording folder (trace.txt.xz plus before/,\n"
	        "after/ and other snapshot folders, info/).\n\n"
	        "options:\n"
	        "  --boot \"KEYS\"          keys added to the derived boot line (last key wins)\n"
	        "  --boot-line \"LINE\"     a whole boot line instead of the derived one\n"
	        "  --ctl PATH=VALUE       write a knob after boot (repeatable)\n"
	        "  --linux VERSION        the allocator rules of Linux VERSION (6.1 .. 7.2) in "
	        "place\n"
	        "                         of the recording's kernel's (uname)\n"
	        "  --json                 JSON instead of the table\n"
	        "  --series FILE          free pages, blocks per order, unusable index (9),\n"
	        "                         pageblocks per type, per-CPU pages, as JSON\n"
	        "  --every N              events between --series points (default: 300 points)\n"
	        "  --svg FILE             fragmentation over time, phase markers, kernel points\n"
	        "  --map FILE             the pool's memory map at the end, as pagealloc map draws "
	        "it (SVG)\n"
	        "  --validate-every N     pa_validate every N events (default: as many as the "
	        "pool\n"
	        "                         has frames, at least 200000; 0: at the end only)\n"
	        "  --compare \"KEYS\" ...   replay under each configuration, print them side by "
	        "side\n"
	        "  -j N                   configurations replayed at once (default 2)\n");
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *e;
	errno = 0;
	*v = strtoull(s, &e, 10);
	return *s && !*e && !errno ? 0 : -1;
}

static int replay_opt(struct replay_args *a, int argc, char **argv, int *i)
{
	const char *arg = argv[*i];
	const char *next = *i + 1 < argc ? argv[*i + 1] : NULL;
	uint64_t v;
	if (strcmp(arg, "--json") == 0)
		return a->json = true, 0;
	if (strcmp(arg, "--compare") == 0) {
		while (*i + 1 < argc && argv[*i + 1][0] != '-' && a->nr_configs < 32)
			a->configs[a->nr_configs++] = argv[++*i];
		return a->nr_configs ? 0 : -1;
	}
	if (!next)
		return -1;
	++*i;
	if (strcmp(arg, "--boot") == 0)
		a->opt.boot_extra = next;
	else if (strcmp(arg, "--boot-line") == 0)
		a->opt.boot = next;
	else if (strcmp(arg, "--ctl") == 0 && a->opt.nr_ctl < 16)
		a->opt.ctl[a->opt.nr_ctl++] = next;
	else if (strcmp(arg, "--series") == 0)
		a->series = next;
	else if (strcmp(arg, "--svg") == 0)
		a->svg = next;
	else if (strcmp(arg, "--linux") == 0)
		a->opt.linux_ver = next;
	else if (strcmp(arg, "--map") == 0)
		a->opt.map_path = next;
	else if (strcmp(arg, "--every") == 0 && parse_u64(next, &v) == 0 && v)
		a->opt.series_every = v;
	else if (strcmp(arg, "--validate-every") == 0 && parse_u64(next, &v) == 0)
		a->opt.validate_every = v;
	else if (strcmp(arg, "-j") == 0 && parse_u64(next, &v) == 0 && v && v < 64)
		a->jobs = (unsigned)v;
	else
		return -1;
	return 0;
}

static int parse_replay_args(struct replay_args *a, int argc, char **argv)
{
	a->opt.validate_every = RP_VALIDATE_AUTO;
	a->jobs = 2;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			replay_usage(stdout);
			return 1;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			if (replay_opt(a, argc, argv, &i)) {
				fprintf(stderr,
				        "pagealloc replay: bad option or value at '%s' (see "
				        "pagealloc replay --help)\n",
				        argv[i]);
				return -1;
			}
		} else if (!a->path) {
			a->path = argv[i];
		} else {
			fprintf(stderr, "pagealloc replay: unexpected argument '%s'\n", argv[i]);
			return -1;
		}
	}
	if (!a->path) {
		replay_usage(stderr);
		return -1;
	}
	a->opt.want_series = a->series || a->svg;
	a->opt.progress = bench_progress; /* prints only on a terminal */
	return 0;
}

/* One replay, its outputs written; 0 or 1. */
static int replay_one(const struct replay_args *a, const struct rp_trace *t, struct rp_machine *m,
                      const struct rp_options *opt, FILE *out)
{
	struct rp_result res;
	if (rp_replay(t, m, opt, &res))
		return 1;
	if (a->json)
		rp_print_json(out, m, &res, t);
	else
		rp_print_table(out, m, &res, t);
	int rc = 0;
	if (a->series && rp_write_series(a->series, &res))
		rc = 1;
	if (a->svg && rp_write_svg(a->svg, m, &res, t))
		rc = 1;
	if (a->svg && !rc && out == stdout && !a->json)
		printf("\nfragmentation over time: %s\n", a->svg);
	if (opt->map_path && !rc && out == stdout && !a->json)
		printf("memory map at the end: %s\n", opt->map_path);
	free(res.series);
	return rc;
}

/* Run configuration i in a child writing its JSON to tmp[i]. */
static pid_t start_config(const struct replay_args *a, const struct rp_trace *t,
                          struct rp_machine *m, unsigned i, FILE *tmp)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	struct replay_args ca = *a;
	ca.json = true;
	ca.series = ca.svg = NULL;
	ca.opt.map_path = NULL;
	ca.opt.boot_extra = a->configs[i];
	ca.opt.progress = NULL;
	int rc = replay_one(&ca, t, m, &ca.opt, tmp);
	fflush(tmp);
	_exit(rc);
}

static int run_compare(const struct replay_args *a, const struct rp_trace *t, struct rp_machine *m)
{
	FILE *tmp[32];
	pid_t pids[32];
	unsigned started = 0, running = 0, failed = 0;
	for (unsigned i = 0; i < a->nr_configs; i++)
		if (!(tmp[i] = tmpfile()))
			return perror("tmpfile"), 1;
	while (started < a->nr_configs || running) {
		if (started < a->nr_configs && running < a->jobs) {
			pids[started] = start_config(a, t, m, started, tmp[started]);
			started++, running++;
			continue;
		}
		int st;
		if (wait(&st) > 0) {
			running--;
			failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
		}
	}
	(void)pids;
	char *texts[32];
	const char *names[32];
	for (unsigned i = 0; i < a->nr_configs; i++) {
		rewind(tmp[i]);
		texts[i] = rp_read_stream(tmp[i]);
		names[i] = a->configs[i];
		fclose(tmp[i]);
	}
	int rc = failed ? 1 : 0;
	if (!failed && a->json) {
		printf("{\"configs\": [");
		for (unsigned i = 0; i < a->nr_configs; i++)
			printf("%s%s", i ? ",\n" : "\n", texts[i]);
		printf("]}\n");
	} else if (!failed) {
		rc = rp_compare_texts(stdout, texts, names, a->nr_configs) ? 1 : 0;
	} else {
		fprintf(stderr, "pagealloc replay: %u configuration(s) failed\n", failed);
	}
	for (unsigned i = 0; i < a->nr_configs; i++)
		free(texts[i]);
	return rc;
}

int replay_main(int argc, char **argv)
{
	struct replay_args a = { 0 };
	int rc = parse_replay_args(&a, argc, argv);
	if (rc)
		return rc < 0 ? 2 : 0;
	struct rp_machine *m = calloc(1, sizeof *m);
	struct rp_trace t;
	bench_progress_start("replay");
	if (!m || rp_machine_load(a.path, m) || rp_trace_read(m->trace_path, &t, a.opt.progress)) {
		bench_progress_stop();
		free(m);
		return 1;
	}
	if (t.unparsed)
		fprintf(stderr, "pagealloc replay: %llu line(s) not understood, first: %s\n",
		        (unsigned long long)t.unparsed, t.err);
	if (a.nr_configs)
		bench_progress_stop(); /* the parent waits; each child replays quietly */
	rc = a.nr_configs ? run_compare(&a, &t, m) : replay_one(&a, &t, m, &a.opt, stdout);
	bench_progress_stop();
	rp_trace_free(&t);
	free(m);
	return rc;
}

int compare_main(int argc, char **argv)
{
	char *texts[64];
	const char *names[64];
	unsigned n = 0;
	int rc = 0;
	for (int i = 1; i < argc && n < 64; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: pagealloc compare A.json B.json ...\n"
			       "Side by side (value, %%change against the first) of replays' "
			       "--json outputs.\n");
			return 0;
		}
		FILE *f = fopen(argv[i], "r");
		if (!f) {
			fprintf(stderr, "pagealloc compare: %s: %s\n", argv[i], strerror(errno));
			rc = 1;
			break;
		}
		names[n] = argv[i];
		texts[n++] = rp_read_stream(f);
		fclose(f);
	}
	if (!rc && n < 1) {
		fprintf(stderr, "usage: pagealloc compare A.json B.json ...\n");
		return 2;
	}
	if (!rc)
		rc = rp_compare_texts(stdout, texts, names, n) ? 1 : 0;
	for (unsigned i = 0; i < n; i++)
		free(texts[i]);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/*
 * pagealloc: the command-line face of the library. It boots a pool from
 * --boot, prints a report or runs a workload, and exits. It uses only the
 * public API (and the workloads of bench/).
 *
 * Exit status: 0 success, 1 a failure at run time (boot refused, a knob
 * refused its value), 2 a usage error. Messages go to stderr.
 */
#define _GNU_SOURCE
#include "pagealloc.h"

#include "bench.h"
#include "cli.h"
#include "replay/replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2

/* What a subcommand was given. */
struct cli {
	const struct command *cmd;
	const char *boot;
	bool json;
	const struct bench_workload *run; /* --run */
	struct bench_opts bench;          /* the workload's options */
	const char *args[2];              /* positional arguments */
	unsigned nargs;
	unsigned extfrag_files; /* extfrag: bit 0 --unusable, bit 1 --index; none: both */
	const char *svg;        /* map: --svg FILE */
};

enum cmd_flags {
	CMD_JSON = 1u << 0,    /* takes --json */
	CMD_RUN = 1u << 1,     /* takes --run WORKLOAD */
	CMD_BENCH = 1u << 2,   /* parses the workload's options itself */
	CMD_EXTFRAG = 1u << 3, /* takes --unusable and --index */
	CMD_SVG = 1u << 4,     /* takes --svg FILE */
};

struct command {
	const char *name;
	const char *args;
	const char *help;
	int (*fn)(struct cli *cli);
	unsigned flags;
	unsigned max_args;
	enum pa_report_kind kind; /* the report it prints, if any */
};

static int cmd_report(struct cli *cli);
static int cmd_extfrag(struct cli *cli);
static int cmd_bench(struct cli *cli);
static int cmd_ctl(struct cli *cli);
static int cmd_map(struct cli *cli);

static const struct command commands[] = {
	{ "info", "", "the derived configuration: page size, orders, zones, watermarks", cmd_report,
	  CMD_JSON, 0, PA_REPORT_INFO },
	{ "buddyinfo", "", "free blocks per order, as /proc/buddyinfo", cmd_report,
	  CMD_JSON | CMD_RUN, 0, PA_REPORT_BUDDYINFO },
	{ "pagetypeinfo", "",
	  "free blocks per migratetype and pageblock counts, as "
	  "/proc/pagetypeinfo",
	  cmd_report, CMD_JSON | CMD_RUN, 0, PA_REPORT_PAGETYPEINFO },
	{ "vmstat", "", "counters, as /proc/vmstat", cmd_report, CMD_JSON | CMD_RUN, 0,
	  PA_REPORT_VMSTAT },
	{ "zoneinfo", "", "zones and per-CPU lists with per-order counts, as /proc/zoneinfo",
	  cmd_report, CMD_JSON | CMD_RUN, 0, PA_REPORT_ZONEINFO },
	{ "lockstat", "",
	  "lock contention per lock and call site, as perf lock contention prints it", cmd_report,
	  CMD_JSON | CMD_RUN, 0, PA_REPORT_LOCKSTAT },
	{ "superblockinfo", "",
	  "per superblock region: pageblocks per migratetype, free frames, tainted or not",
	  cmd_report, CMD_JSON | CMD_RUN, 0, PA_REPORT_SUPERBLOCKINFO },
	{ "extfrag", "[--unusable | --index]",
	  "unusable free space and fragmentation indexes, as debugfs extfrag "
	  "(--unusable: exactly extfrag/unusable_index, --index: exactly extfrag/extfrag_index)",
	  cmd_extfrag, CMD_JSON | CMD_RUN | CMD_EXTFRAG, 0, PA_REPORT_EXTFRAG_INDEX },
	{ "bench", "[NAME] [options]", "run a workload and time it (default: churn)", cmd_bench,
	  CMD_BENCH, 1, PA_REPORT_COUNT },
	{ "map", "[--svg FILE]",
	  "the pool, one cell per pageblock: type, fullness, per-CPU frames, zones, CMA, 1 GiB "
	  "grid",
	  cmd_map, CMD_RUN | CMD_SVG, 0, PA_REPORT_COUNT },
	{ "ctl", "[PATH [VALUE]]",
	  "read (or write, then read) a runtime knob; no PATH lists every path with its value",
	  cmd_ctl, CMD_JSON, 2, PA_REPORT_COUNT },
};

#define NR_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
	fprintf(f, "usage: pagealloc COMMAND [options]\n\ncommands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		char head[40];
		snprintf(head, sizeof head, "%s %s", commands[i].name, commands[i].args);
		fprintf(f, "  %-22s %s\n", head, commands[i].help);
	}
	fprintf(f, "  %-22s %s\n", "replay PATH [options]",
	        "replay a kernel ftrace trace beside its snapshots (replay --help)");
	fprintf(f, "  %-22s %s\n", "compare A.json B.json", "replays' JSON side by side");
	fprintf(f, "  %-22s %s\n", "record [-o DIR] [-- CMD]",
	        "record this machine's kernel for replay (root; record --help)");
	fprintf(f, "\noptions:\n"
	           "  --boot \"CMDLINE\"  boot line, e.g. \"mem=4G numa=2 max_order=18\" "
	           "(default: all defaults)\n"
	           "  --ctl PATH=VALUE set a runtime knob after boot, before anything else\n"
	           "                   (repeatable; every command; pagealloc ctl lists them)\n"
	           "  --json           JSON instead of the /proc text\n"
	           "  --run WORKLOAD   (buddyinfo, pagetypeinfo, vmstat, zoneinfo, lockstat, "
	           "superblockinfo, map, "
	           "extfrag)\n"
	           "                   run a workload first, with its options (pagealloc bench "
	           "--help\n"
	           "                   lists them)\n"
	           "  --help           this text, or a command's\n"
	           "  --version        the version of the program and its library\n");
}

static void cmd_usage(const struct command *cmd, FILE *f)
{
	fprintf(f, "usage: pagealloc %s%s%s [--boot \"CMDLINE\"] [--ctl PATH=VALUE]...%s%s\n%s\n",
	        cmd->name, *cmd->args ? " " : "", cmd->args,
	        (cmd->flags & CMD_JSON) ? " [--json]" : "",
	        (cmd->flags & CMD_RUN) ? " [--run WORKLOAD [workload options]]" : "", cmd->help);
	if (cmd->fn == cmd_ctl)
		fprintf(f, "a write lasts as long as this process's pool: the value read back "
		           "shows it.\nTo run a command with a knob set, give it --ctl PATH=VALUE; "
		           "`pagealloc ctl help` describes each path\n");
	if (cmd->flags & CMD_RUN) {
		fprintf(f, "\nworkloads (pagealloc bench NAME --help gives their options):\n");
		bench_list(f);
	}
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Options                                                                 */
/* ---------------------------------------------------------------------- */

/* "--name V" or "--name=V": the value, or NULL when arg is another option. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
	size_t n = strlen(name);
	const char *arg = argv[*i];
	if (strncmp(arg, name, n) != 0 || (arg[n] && arg[n] != '='))
		return NULL;
	if (arg[n])
		return arg + n + 1;
	if (*i + 1 < argc)
		return argv[++*i];
	*missing = true;
	return NULL;
}

/* --ctl PATH=VALUE: checked for its shape here, applied after each boot. */
static int add_ctl(struct bench_opts *opt, const char *set)
{
	const char *eq = strchr(set, '=');
	if (!eq || eq == set) {
		fprintf(stderr,
		        "pagealloc: --ctl %s: expected PATH=VALUE, e.g. "
		        "--ctl pcp/orders/4/enabled=1\n",
		        set);
		return -1;
	}
	if (opt->nr_ctls == BENCH_MAX_CTLS) {
		fprintf(stderr, "pagealloc: more than %d --ctl options\n", BENCH_MAX_CTLS);
		return -1;
	}
	opt->ctls[opt->nr_ctls++] = set;
	return 1;
}

/* The options of the command itself; 1 taken, 0 not one of them, -1 bad. */
static int parse_cli_opt(struct cli *cli, int argc, char **argv, int *i)
{
	bool missing = false;
	const char *v;
	if ((v = opt_value(argc, argv, i, "--boot", &missing))) {
		cli->boot = v;
		cli->bench.boot = v;
		return 1;
	}
	if ((v = opt_value(argc, argv, i, "--ctl", &missing)))
		return add_ctl(&cli->bench, v);
	if ((cli->cmd->flags & CMD_RUN) && (v = opt_value(argc, argv, i, "--run", &missing))) {
		cli->run = bench_find(v);
		if (cli->run && !cli->run->own_pool)
			return 1;
		fprintf(stderr, "pagealloc: --run %s: %s\n", v,
		        cli->run ? "boots pools of its own" : "no such workload");
		return -1;
	}
	if ((cli->cmd->flags & CMD_SVG) && (v = opt_value(argc, argv, i, "--svg", &missing))) {
		cli->svg = v;
		return 1;
	}
	if (missing) {
		fprintf(stderr, "pagealloc: %s needs a value\n", argv[*i]);
		return -1;
	}
	if ((cli->cmd->flags & CMD_JSON) && strcmp(argv[*i], "--json") == 0) {
		cli->json = true;
		return 1;
	}
	if ((cli->cmd->flags & CMD_EXTFRAG) &&
	    (strcmp(argv[*i], "--unusable") == 0 || strcmp(argv[*i], "--index") == 0)) {
		cli->extfrag_files |= argv[*i][2] == 'u' ? 1u : 2u;
		return 1;
	}
	return 0;
}

static int parse_one(struct cli *cli, int argc, char **argv, int *i)
{
	const char *arg = argv[*i];
	int ret = parse_cli_opt(cli, argc, argv, i);
	if (ret)
		return ret;
	if (cli->cmd->flags & (CMD_BENCH | CMD_RUN)) {
		ret = bench_parse_opt(&cli->bench, argc, argv, i);
		if (ret)
			return ret;
	}
	/* A negative number is a value (for ctl to refuse), not an option. */
	if (arg[0] == '-' && arg[1] && !(arg[1] >= '0' && arg[1] <= '9')) {
		fprintf(stderr, "pagealloc %s: unknown option '%s' (see pagealloc %s --help)\n",
		        cli->cmd->name, arg, cli->cmd->name);
		return -1;
	}
	if (cli->nargs >= cli->cmd->max_args) {
		fprintf(stderr, "pagealloc %s: unexpected argument '%s'\n", cli->cmd->name, arg);
		return -1;
	}
	cli->args[cli->nargs++] = arg;
	return 1;
}

/* Parse argv[2..]; returns -1 on a usage error, 1 when help was printed, else 0. */
static int parse_cli(struct cli *cli, int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
		if (parse_one(cli, argc, argv, &i) < 0)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Commands                                                                */
/* ---------------------------------------------------------------------- */

/* Boot from --boot (all defaults without it), then apply the --ctl settings. */
static int boot_pool(const struct cli *cli, struct pa_pool **pool)
{
	return bench_boot(&cli->bench, "", pool);
}

/* Boot, and run the --run workload on the pool if one was named. */
static int prepare_pool(const struct cli *cli, struct pa_pool **pool)
{
	if (boot_pool(cli, pool))
		return -1;
	if (cli->run)
		bench_progress(cli->run->name, 0);
	if (cli->run && cli->run->run(&cli->bench, *pool, NULL)) {
		pa_shutdown(*pool);
		return -1;
	}
	return 0;
}

static int print_report(struct pa_pool *pool, enum pa_report_kind kind, unsigned flags)
{
	char *text = bench_report_text(pool, kind, flags);
	if (!text) {
		fprintf(stderr, "pagealloc: %s: report failed\n", pa_report_name(kind));
		return -1;
	}
	fputs(text, stdout);
	free(text);
	return 0;
}

static int cmd_report(struct cli *cli)
{
	struct pa_pool *pool;
	if (prepare_pool(cli, &pool))
		return 1;
	int ret = print_report(pool, cli->cmd->kind, cli->json ? PA_REPORT_JSON : 0);
	pa_shutdown(pool);
	return ret ? 1 : 0;
}

/*
 * One debugfs extfrag file exactly (--unusable, --index), or both: text one
 * after the other under their names, or one JSON object.
 */
static int cmd_extfrag(struct cli *cli)
{
	static const enum pa_report_kind kinds[] = { PA_REPORT_UNUSABLE_INDEX,
		                                     PA_REPORT_EXTFRAG_INDEX };
	struct pa_pool *pool;
	int ret = 0;
	if (prepare_pool(cli, &pool))
		return 1;
	if (cli->extfrag_files == 1 || cli->extfrag_files == 2) {
		ret = print_report(pool, kinds[cli->extfrag_files - 1],
		                   cli->json ? PA_REPORT_JSON : 0);
		pa_shutdown(pool);
		return ret ? 1 : 0;
	}
	for (unsigned i = 0; i < 2 && !ret; i++) {
		if (cli->json)
			printf("%s\"%s\": ", i ? ",\n " : "{", pa_report_name(kinds[i]));
		else
			printf("%s%s:\n", i ? "\n" : "", pa_report_name(kinds[i]));
		ret = print_report(pool, kinds[i], cli->json ? PA_REPORT_JSON : 0);
	}
	if (cli->json && !ret)
		printf("}\n");
	pa_shutdown(pool);
	return ret ? 1 : 0;
}

static int cmd_bench(struct cli *cli)
{
	const char *name = cli->nargs ? cli->args[0] : "churn";
	const struct bench_workload *w = bench_find(name);
	if (!w) {
		fprintf(stderr, "pagealloc bench: no workload '%s'; there are:\n", name);
		bench_list(stderr);
		return EXIT_USAGE;
	}
	bench_progress(w->name, 0);
	return w->run(&cli->bench, NULL, stdout) ? 1 : 0;
}

static int cmd_ctl(struct cli *cli)
{
	struct pa_pool *pool;
	const char *path = cli->args[0];
	int ret = 0;
	if (boot_pool(cli, &pool))
		return 1;
	if (!cli->nargs) {
		ret = cli_ctl_list(pool, cli->json, stdout);
		pa_shutdown(pool);
		return ret ? 1 : 0;
	}
	if (cli->nargs == 2) {
		ret = pa_ctl_write(pool, path, cli->args[1]);
		if (ret)
			fprintf(stderr,
			        "pagealloc ctl: %s=%s: %s (`pagealloc ctl` lists the paths and "
			        "their values)\n",
			        path, cli->args[1], bench_ctl_error(ret));
	}
	if (!ret)
		ret = cli_ctl_show(pool, path, cli->nargs == 2, cli->json, stdout);
	pa_shutdown(pool);
	return ret ? 1 : 0;
}

/* The map of the pool after boot, --ctl and --run: SVG to --svg FILE, else text. */
static int cmd_map(struct cli *cli)
{
	struct pa_pool *pool;
	if (prepare_pool(cli, &pool))
		return 1;
	int ret = cli_map(pool, cli->svg, stdout);
	pa_shutdown(pool);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("pagealloc %s\n", pa_version());
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	/* Commands with options of their own. */
	if (strcmp(argv[1], "replay") == 0)
		return replay_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "compare") == 0)
		return compare_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "record") == 0)
		return record_main(argc - 1, argv + 1);
	struct cli cli = { .cmd = find_command(argv[1]) };
	if (!cli.cmd) {
		fprintf(stderr, "pagealloc: unknown command '%s' (see pagealloc --help)\n",
		        argv[1]);
		return EXIT_USAGE;
	}
	bench_opts_init(&cli.bench);
	int ret = parse_cli(&cli, argc, argv);
	if (ret < 0)
		return EXIT_USAGE;
	if (ret > 0) {
		const struct bench_workload *w = NULL;
		if ((cli.cmd->flags & CMD_BENCH) && cli.nargs)
			w = bench_find(cli.args[0]);
		if (w)
			bench_usage(w, stdout);
		else
			cmd_usage(cli.cmd, stdout);
		if ((cli.cmd->flags & CMD_BENCH) && !w) {
			printf("\nworkloads (pagealloc bench NAME --help gives their options):\n");
			bench_list(stdout);
			printf("\n");
			bench_common_usage(stdout);
		}
		return 0;
	}
	bench_progress_start(cli.cmd->name);
	ret = cli.cmd->fn(&cli);
	bench_progress_stop();
	return ret;
}

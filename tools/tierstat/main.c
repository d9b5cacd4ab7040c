// SPDX-License-Identifier: GPL-2.0
/*
 * tierstat: memory tiers, nodes, per-cgroup top-tier usage, limits and
 * demotion/promotion counters, like systemd-cgtop for tiered memory.
 *
 * Works on kernels with and without the toptier series: what the kernel
 * does not provide is computed (top-tier usage from memory.numa_stat and
 * the memory_tiering node lists) or shown as "-" (limits, new counters).
 * On cgroup v2 the top tier's usage and limits are the fastest tier's
 * line of memory.tiers.{current,low,high,max}.
 * See tierstat.1 for the options, the JSON keys and the metrics.
 *
 * This file: options and the main loop.  tierstat.h: the model;
 * source.c reads the kernel's files into it, model.c orders snapshots
 * and computes rates, human.c draws them for people (and the live view),
 * export.c writes JSON and Prometheus.
 */
#define _GNU_SOURCE
#include "tierstat.h"

struct opts o = { .count = -1, .sort = SORT_NAME, .depth = -1 };
int cg_version;		/* 1 or 2 */
char *cg_root;
uint64_t page_size;

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: tierstat [OPTION]... [CGROUP]...\n"
"Show memory tiers, NUMA nodes, per-cgroup top-tier usage, limits and\n"
"demotion/promotion counters, and the system-wide counters of /proc/vmstat.\n"
"CGROUP paths are relative to the cgroup root (\"a/b\"); each is shown with\n"
"its subtree.  Without CGROUP the whole hierarchy is shown.\n"
"\n"
"  -d, --delay TIME        repeat every TIME (seconds, fractions allowed, or\n"
"                          with a unit: 500ms, 2s) and show rates from the\n"
"                          deltas; on a terminal the view redraws in place,\n"
"                          q quits\n"
"  -b, --batch             with -d: append snapshots, never redraw\n"
"      --depth N           cgroups at most N levels below the root\n"
"  -n, --iterations COUNT  stop after COUNT snapshots (implies -d 1 alone)\n"
"  -s, --sort FIELD        order cgroups by name (default), toptier, lower,\n"
"                          usage, demote or promote (numbers: largest first)\n"
"  -r, --raw, --bytes      exact byte counts instead of K/M/G units\n"
"  -j, --json              one JSON object per snapshot (see tierstat(1))\n"
"  -p, --prometheus        Prometheus text exposition format (metric names\n"
"                          in tierstat(1)), for node_exporter's textfile\n"
"                          collector\n"
"  -o, --output FILE       with -p: write each snapshot to FILE, replacing it\n"
"                          atomically (FILE.<pid>.tmp, then rename)\n"
"  -H, --headers           (headers are always printed; kept for scripts)\n"
"      --sysfs DIR         sysfs root (default /sys, env TIERSTAT_SYSFS)\n"
"      --procfs DIR        procfs root (default /proc, env TIERSTAT_PROCFS)\n"
"      --cgroupfs DIR      cgroup root (env TIERSTAT_CGROUPFS; default\n"
"                          SYSFS/fs/cgroup if cgroup2, else\n"
"                          SYSFS/fs/cgroup/memory (v1), else\n"
"                          SYSFS/fs/cgroup/unified)\n"
"  -h, --help              show this help\n"
"  -V, --version           show the version\n"
"\n"
"\"-\" marks a value the kernel does not provide.  Exit status: 0 on\n"
"success, 1 when sysfs, procfs, cgroupfs or a cgroup is missing, 2 on bad\n"
"arguments.\n");
}

static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("tierstat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'tierstat --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

static void parse_args(int argc, char **argv)
{
	enum { OPT_SYSFS = 256, OPT_PROCFS, OPT_CGROUPFS, OPT_DEPTH };
	static const struct option lo[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, 's' },
		{ "bytes", no_argument, NULL, 'r' },
		{ "raw", no_argument, NULL, 'r' },
		{ "batch", no_argument, NULL, 'b' },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "version", no_argument, NULL, 'V' },
		{ "headers", no_argument, NULL, 'H' },
		{ "sysfs", required_argument, NULL, OPT_SYSFS },
		{ "procfs", required_argument, NULL, OPT_PROCFS },
		{ "cgroupfs", required_argument, NULL, OPT_CGROUPFS },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *env;
	char *end;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:n:s:brjpo:HhV", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			errno = 0;
			o.delay = strtod(optarg, &end);
			if (!strcmp(end, "ms"))
				o.delay /= 1000;
			else if (!strcmp(end, "s"))
				end++;
			else if (*end)
				o.delay = -1;
			if (errno || end == optarg || !(o.delay >= 0.01) || o.delay > 86400)
				bad_usage("bad delay '%s': seconds, or a number with ms or s, from 10ms to 86400s",
					  optarg);
			break;
		case 'n':
			errno = 0;
			o.count = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o.count < 1)
				bad_usage("bad count '%s': a positive integer", optarg);
			break;
		case 's':
			o.sort = -1;
			for (size_t i = 0; i < sizeof(sort_names) / sizeof(*sort_names); i++)
				if (!strcmp(optarg, sort_names[i]))
					o.sort = i;
			if (o.sort < 0)
				bad_usage("unknown sort field '%s' (name, toptier, lower, usage, demote, promote)",
					  optarg);
			break;
		case 'r':
			o.bytes = true;
			break;
		case 'b':
			o.batch = true;
			break;
		case OPT_DEPTH:
			errno = 0;
			o.depth = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o.depth < 0 || o.depth > 10000)
				bad_usage("bad depth '%s': a number from 0", optarg);
			break;
		case 'j':
			o.json = true;
			break;
		case 'p':
			o.prom = true;
			break;
		case 'o':
			if (!*optarg)
				bad_usage("empty output file name");
			o.output = optarg;
			break;
		case 'V':
			printf("tierstat %s\n", TIERSTAT_VERSION);
			exit(0);
		case 'H':
			break;	/* headers are always printed */
		case OPT_SYSFS:
			o.sysfs = optarg;
			break;
		case OPT_PROCFS:
			o.procfs = optarg;
			break;
		case OPT_CGROUPFS:
			o.cgroupfs = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			bad_usage("option '%s' needs an argument", argv[optind - 1]);
			break;
		default:
			/* A long option given an argument it does not take also
			 * ends here, with optopt set to its short name. */
			if (!strncmp(argv[optind - 1], "--", 2)) {
				const char *eq = strchr(argv[optind - 1], '=');

				if (optopt && eq)
					bad_usage("option '%.*s' takes no argument",
						  (int)(eq - argv[optind - 1]), argv[optind - 1]);
				bad_usage("unknown option '%s'", argv[optind - 1]);
			}
			if (optopt)
				bad_usage("unknown option '-%c'", optopt);
			bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	o.cgroups = argv + optind;
	o.ncgroups = argc - optind;
	if (o.json && o.prom)
		bad_usage("--json and --prometheus exclude each other");
	if (o.output && !o.prom)
		bad_usage("--output needs --prometheus");
	if (o.count > 0 && o.delay == 0)
		o.delay = 1;
	if (!o.sysfs)
		o.sysfs = (env = getenv("TIERSTAT_SYSFS")) && *env ? env : "/sys";
	if (!o.procfs)
		o.procfs = (env = getenv("TIERSTAT_PROCFS")) && *env ? env : "/proc";
	o.headers = true;
	/* No escape codes where they would print as text. */
	o.colour = isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
		   !((env = getenv("TERM")) && !strcmp(env, "dumb"));
}


int main(int argc, char **argv)
{
	struct snap cur, prev;
	bool have_prev = false, live;
	long n = 0;

	parse_args(argc, argv);
	page_size = sysconf(_SC_PAGESIZE);
	find_cgroup_root();
	/* Redraw in place on a terminal that can (top, systemd-cgtop);
	 * append snapshots otherwise, or with -b. */
	live = o.delay > 0 && !o.json && !o.prom && !o.batch && isatty(STDOUT_FILENO) &&
	       !(getenv("TERM") && !strcmp(getenv("TERM"), "dumb"));
	if (live) {
		struct winsize ws = { 0 };

		if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
			path_width = ws.ws_col / 3 > 12 ? ws.ws_col / 3 : 12;
		live_start();
	}
	for (;;) {
		take(&cur, have_prev ? &prev : NULL);
		if (o.output) {
			write_atomically(&cur);
		} else if (o.prom) {
			print_prom(stdout, &cur);
		} else if (o.json) {
			print_json(&cur, have_prev ? secs(&prev.mono, &cur.mono) : NAN);
		} else if (live) {
			char *buf = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&buf, &len);

			if (!f)
				die(EXIT_RUNTIME, "out of memory");
			print_human(f, &cur, true);
			fclose(f);
			live_draw(buf, len);
			free(buf);
		} else {
			print_human(stdout, &cur, o.delay > 0);
		}
		fflush(stdout);
		if (have_prev)
			release(&prev);
		prev = cur;
		have_prev = true;
		if (o.delay <= 0 || (o.count > 0 && ++n >= o.count))
			break;
		if (live) {
			if (live_wait(o.delay))
				break;
			continue;
		}
		if (!o.json && !o.output)
			putchar('\n');
		struct timespec ts = { (time_t)o.delay,
				       (long)((o.delay - (time_t)o.delay) * 1e9) };
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	release(&prev);
	live_restore();
	return ferror(stdout) ? EXIT_RUNTIME : 0;
}

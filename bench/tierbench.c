// SPDX-License-Identifier: GPL-2.0
/*
 * Guest side of make bench (bench/run.sh): one benchmark per boot, chosen
 * on the kernel command line:
 *
 *   toptier.bench=enforce      v2: memory.tiers.high and .max lowered to
 *                              half the usage, against move_pages(2)
 *   toptier.bench=enforce_v1   v1: the top-tier soft limit under a tight
 *                              top tier, against move_pages(2)
 *   toptier.bench=hardcap      overshoot of memory.tiers.current over
 *                              memory.tiers.max, sampled every 10 ms
 *   toptier.bench=protect      share of a protected hot set on node0 while
 *                              a greedy neighbour allocates
 *   toptier.bench=pingpong     promotions and demotions per minute of a
 *                              capped cgroup whose hot set exceeds its cap
 *   toptier.bench=hotset       a cgroup at its top-tier budget with cold
 *                              data; a region on node1 turns hot: its share
 *                              on the top tier over time
 *   toptier.bench=threetier    hot, warm and cold sets of one cgroup with
 *                              limits at both boundaries of three tiers
 *   toptier.bench=victim       four cgroups reading their working sets at
 *                              random, three started first, the victim
 *                              later: each one's top-tier bytes over time
 *   toptier.bench_config=patched|stock|damon   (protect, pingpong)
 *                        low|auto|stock|damon  (victim)
 *                        patched|stock|damon   (hotset)
 *   toptier.bench_reps=N                       (enforce, hardcap)
 *
 * Output, one line each, for bench/report.py:
 *   BENCH bench=<name> key=value ...     one measurement
 *   SERIES bench=<name> key=value ...    one sample of a time series
 * Anything else is a comment.  A benchmark that cannot set up its
 * premise prints "BENCH-ERROR <why>" and exits 1.
 *
 * The v2 limits and usage are the top tier's: the line of the fastest
 * memory tier (its key N, read from sysfs) in the memory.tiers.* files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tt.h"

#define MB_OF(x)	((double)(x) / MB)
#define DEMOTION	"/sys/kernel/mm/numa/demotion_enabled"
#define NUMA_BALANCING	"/proc/sys/kernel/numa_balancing"

static char cmdline[4096];

/* The value of toptier.<key>= on the kernel command line (malloc()ed). */
static const char *param(const char *key, const char *def)
{
	char pat[64];
	const char *p;

	if (!cmdline[0] && read_text("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		return def;
	snprintf(pat, sizeof(pat), "toptier.%s=", key);
	for (p = strstr(cmdline, pat); p; p = strstr(p + 1, pat)) {
		if (p == cmdline || p[-1] == ' ')
			break;
	}
	if (!p)
		return def;
	p += strlen(pat);
	return strndup(p, strcspn(p, " \n"));
}

static void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	printf("BENCH-ERROR ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

static void must_write(const char *path, const char *val)
{
	int err = write_text(path, val);

	if (err)
		fail("writing \"%s\" to %s: %s", val, path, strerror(-err));
}

static void must_cg_write(const char *cg, const char *file, const char *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	must_write(path, val);
}

/* The key of the fastest memory tier: the top tier's line of memory.tiers.*. */
static int top_tier(void)
{
	struct tt_tier tiers[TT_MAX_TIERS];
	int n = tiers_read(tiers, TT_MAX_TIERS);

	if (n < 2)
		fail("fewer than two memory tiers (%d)", n);
	return tiers[0].key;
}

/* The value of tier key's line of a memory.tiers.* file open at fd (pread
 * at 0, so a .peak fd keeps its state); LLONG_MIN if there is none. */
static long long fd_read_tier(int fd, int key)
{
	int keys[TT_MAX_TIERS], n;
	long long vals[TT_MAX_TIERS];
	char buf[512];
	ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);

	if (len <= 0)
		return LLONG_MIN;
	buf[len] = 0;
	n = keyed_parse(buf, keys, vals, TT_MAX_TIERS);
	for (int i = 0; i < n; i++)
		if (keys[i] == key)
			return vals[i];
	return LLONG_MIN;
}

/* Pages of [addr, addr + len) in task pid on each node (move_pages status);
 * each page's node (or -errno) in nodes[], if not NULL. */
static int pages_nodes(pid_t pid, const char *addr, size_t len, long counts[TT_MAX_NODES],
		       int *nodes)
{
	enum { BATCH = 1024 };
	void *pages[BATCH];
	int status[BATCH];
	size_t n = len / page_size;

	memset(counts, 0, sizeof(long) * TT_MAX_NODES);
	for (size_t i = 0; i < n; i += BATCH) {
		size_t k = n - i < BATCH ? n - i : BATCH;

		for (size_t j = 0; j < k; j++)
			pages[j] = (void *)(addr + (i + j) * page_size);
		if (syscall(SYS_move_pages, pid, k, pages, NULL, status, 0))
			return -errno;
		for (size_t j = 0; j < k; j++) {
			if (status[j] >= 0 && status[j] < TT_MAX_NODES)
				counts[status[j]]++;
			if (nodes)
				nodes[i + j] = status[j];
		}
	}
	return 0;
}

static int pages_of(pid_t pid, const char *addr, size_t len, long counts[TT_MAX_NODES])
{
	return pages_nodes(pid, addr, len, counts, NULL);
}

/* ---- children sharing a small control block with the parent -------------- */
struct ctl {
	volatile int ready;
	volatile int go;
	char *volatile addr;
	volatile size_t len;
	volatile long long allocated;	/* bytes so far (greedy) */
	volatile long long ops;		/* reads so far (victim) */
};

static struct ctl *ctl_new(void)
{
	struct ctl *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		fail("mmap: %s", strerror(errno));
	memset(c, 0, sizeof(*c));
	return c;
}

/* Poll until cond() holds or secs pass; true if it held. */
static bool wait_for(bool (*cond)(void *), void *arg, double secs)
{
	double deadline = now_s() + secs;

	while (!cond(arg)) {
		if (now_s() > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

static bool is_ready(void *c)
{
	return ((struct ctl *)c)->ready;
}

struct hot_arg {
	struct ctl *ctl;
	size_t len;
	int place_node;		/* -1: local */
	bool touch;		/* keep reading every page until killed */
	int period_ms;		/* one pass per period; 0: back to back */
};

/* Map and fill len bytes (on place_node, if set), then touch them for ever. */
static int hot_main(void *p)
{
	struct hot_arg *a = p;
	char *buf = map_anon(a->len);

	if (!buf)
		return 1;
	if (a->place_node >= 0 && place_on_node(buf, a->len, a->place_node))
		return 2;
	fill_pages(buf, a->len, 1);
	if (a->place_node >= 0 && reset_policy(buf, a->len))
		return 3;
	a->ctl->addr = buf;
	a->ctl->len = a->len;
	a->ctl->ready = 1;
	while (a->touch) {
		double next = now_s() + a->period_ms / 1000.0;

		touch_pages(buf, a->len);
		while (a->period_ms && now_s() < next)
			usleep(1000);	/* the workload's access rate */
	}
	for (;;)
		pause();
}

static pid_t start_hot(const char *cg, struct hot_arg *a)
{
	pid_t pid = spawn_in(cg, hot_main, a);

	if (pid <= 0 || !wait_for(is_ready, a->ctl, 120))
		fail("the hot-set task in %s did not start", cg ? cg : "/");
	return pid;
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		wait_child(pid);
	}
}

/* node0's free memory and its watermarks, summed over its zones, in bytes. */
static void node0_state(long long *free, long long *low, long long *toptier)
{
	struct tt_zone z[TT_MAX_ZONES];
	int n = zoneinfo_read(z, TT_MAX_ZONES);

	*free = *low = *toptier = 0;
	for (int i = 0; i < n; i++) {
		if (z[i].node || z[i].managed <= 0)
			continue;
		*free += z[i].free * page_size;
		*low += z[i].low * page_size;
		if (z[i].toptier > 0)
			*toptier += z[i].toptier * page_size;
	}
}

/*
 * A filler: mlocked memory bound to node0, taken in 1 MB steps until
 * node0's free memory is at most `leave` bytes.  Mlocked, so that neither
 * reclaim nor demotion gives it back: the pressure falls on the benchmark's
 * own memory.  Holds it until killed.
 */
struct filler_arg {
	struct ctl *ctl;
	long long leave;
};

static int filler_main(void *p)
{
	struct filler_arg *a = p;
	long long free, low, tt;

	if (bind_to_node(0))
		return 1;
	for (;;) {
		char *buf;

		node0_state(&free, &low, &tt);
		if (free <= a->leave)
			break;
		buf = map_anon(MB);
		if (!buf || mlock(buf, MB))
			return 2;
		fill_pages(buf, MB, 2);
		a->ctl->allocated += MB;
	}
	a->ctl->ready = 1;
	for (;;)
		pause();
}

static pid_t start_filler(long long leave)
{
	static struct filler_arg a;
	long long free, low, tt;
	pid_t pid;

	node0_state(&free, &low, &tt);
	if (leave < low + 16 * (long long)MB)
		fail("filler: leaving %.0f MB would go below node0's low watermark (%.0f MB)",
		     MB_OF(leave), MB_OF(low));
	a.ctl = ctl_new();
	a.leave = leave;
	pid = spawn_in(NULL, filler_main, &a);
	if (pid <= 0 || !wait_for(is_ready, a.ctl, 120))
		fail("the filler did not get node0 down to %.0f MB free", MB_OF(leave));
	printf("# filler: %.0f MB mlocked on node0, %.0f MB free left\n",
	       MB_OF(a.ctl->allocated), MB_OF(node_free(0)));
	return pid;
}

/* ---- raw migration: the reference of enforcement speed ------------------- */
/*
 * move_pages(2) of a freshly written region from node0 to node1, the same
 * state as the pages enforcement moves (FACTS.md: the first move of a
 * fresh region and later ones differ by a factor of six).
 */
static double raw_move_mbps(size_t len)
{
	char *buf = map_anon(len);
	long counts[TT_MAX_NODES];
	double t0, t1;

	if (!buf || place_on_node(buf, len, 0))
		fail("raw move: cannot map %zu MB on node0", len / MB);
	fill_pages(buf, len, 3);
	reset_policy(buf, len);
	t0 = now_s();
	if (move_range(buf, len, 1))
		fail("raw move: move_pages failed");
	t1 = now_s();
	pages_of(0, buf, len, counts);
	if (counts[1] * page_size < (long long)len * 99 / 100)
		fail("raw move: only %.0f of %zu MB moved", MB_OF(counts[1] * page_size), len / MB);
	munmap(buf, len);
	return MB_OF(len) / (t1 - t0);
}

/* ---- enforcement speed ------------------------------------------------------ */
#define ENF_LIMIT	(96 * MB)	/* the limit; the cgroup starts at twice it */

struct current_arg {
	const char *cg;
	const char *file;
	long long target;
	int tier;		/* the line of a memory.tiers.* file; -1: a plain file */
};

static bool usage_at_target(void *p)
{
	struct current_arg *a = p;
	long long v = a->tier >= 0 ? cg_tier_read(a->cg, a->file, a->tier)
				   : cg_read_ll(a->cg, a->file);

	return v != LLONG_MIN && v <= a->target;
}

/* Usage down from 2 x limit to the limit, after writing it; MB/s or < 0. */
static double enforce_v2_once(const char *root, const char *file, int rep)
{
	struct hot_arg ha = { .ctl = ctl_new(), .len = 2 * ENF_LIMIT, .place_node = 0 };
	struct current_arg ca;
	char *cg = cg_create(root, "enf");
	long long before, after, d0;
	int top = top_tier();
	double t0, t1;
	char val[48];
	pid_t pid;

	if (!cg)
		fail("cannot create a cgroup");
	pid = start_hot(cg, &ha);
	before = cg_tier_read(cg, "memory.tiers.current", top);
	if (before < 2 * (long long)ENF_LIMIT - 8 * (long long)MB)
		fail("premise: %.0f MB on the top tier, want %lu", MB_OF(before),
		     2 * ENF_LIMIT / MB);
	d0 = vmstat_prefix("pgdemote_");
	snprintf(val, sizeof(val), "%d %lu", top, ENF_LIMIT);
	ca = (struct current_arg){ cg, "memory.tiers.current", ENF_LIMIT, top };
	t0 = now_s();
	must_cg_write(cg, file, val);	/* .max returns once demoted */
	if (!wait_for(usage_at_target, &ca, 120))
		fail("%s: still %.0f MB after 120 s", file,
		     MB_OF(cg_tier_read(cg, "memory.tiers.current", top)));
	t1 = now_s();
	after = cg_tier_read(cg, "memory.tiers.current", top);
	printf("# rep %d %s: %.1f -> %.1f MB in %.3f s, %.1f MB demoted\n", rep, file,
	       MB_OF(before), MB_OF(after), t1 - t0,
	       MB_OF((vmstat_prefix("pgdemote_") - d0) * page_size));
	stop(pid);
	cg_destroy(cg);
	free(cg);
	return MB_OF(before - ENF_LIMIT) / (t1 - t0);
}

static int bench_enforce(int reps)
{
	const char *root = cg2_root();
	static const char *const modes[][2] = {
		{ "v2_high", "memory.tiers.high" },
		{ "v2_max", "memory.tiers.max" },
	};

	if (!root)
		fail("no cgroup v2");
	for (int rep = 0; rep < reps; rep++) {
		for (int i = 0; i < 2; i++) {
			/* Alternate which mode goes first, and measure the
			 * reference right before each enforcement. */
			int m = (rep & 1) ? 1 - i : i;
			double raw = raw_move_mbps(ENF_LIMIT);
			double enf = enforce_v2_once(root, modes[m][1], rep);

			printf("BENCH bench=enforce mode=%s rep=%d mb=%lu raw_mbps=%.1f enforce_mbps=%.1f ratio=%.3f\n",
			       modes[m][0], rep, ENF_LIMIT / MB, raw, enf, enf / raw);
		}
	}
	return 0;
}

static void touch_node0_page(void)
{
	char *p;

	bind_to_node(0);
	p = map_anon(2 * MB);
	if (p) {
		memset(p, 1, 2 * MB);
		munmap(p, 2 * MB);
	}
	unbind();
}

static int bench_enforce_v1(int reps)
{
	const char *root = cg1_root();
	const char *soft = "memory.toptier_soft_limit_in_bytes";
	const char *usage = "memory.toptier_usage_in_bytes";

	if (!root)
		fail("no cgroup v1 memory hierarchy");
	for (int rep = 0; rep < reps; rep++) {
		struct hot_arg ha = { .ctl = ctl_new(), .len = 2 * ENF_LIMIT, .place_node = 0 };
		long long before, node0_free, low, wmark;
		struct current_arg ca;
		double raw, t0, t1;
		pid_t pid, filler;
		char val[32];
		char *cg;

		raw = raw_move_mbps(ENF_LIMIT);
		cg = cg_create(root, "enf");
		if (!cg)
			fail("cannot create a cgroup");
		pid = start_hot(cg, &ha);
		node0_state(&node0_free, &low, &wmark);
		if (wmark <= low)
			fail("premise: node0's toptier watermark %.0f MB", MB_OF(wmark));
		/* Below the toptier watermark, above the others: only the
		 * soft limit has anything to do here. */
		filler = start_filler(wmark - 32 * (long long)MB);
		before = cg_read_ll(cg, usage);
		if (before < 2 * (long long)ENF_LIMIT - 8 * (long long)MB)
			fail("premise: %.0f MB on the top tier", MB_OF(before));
		snprintf(val, sizeof(val), "%lu", ENF_LIMIT);
		ca = (struct current_arg){ cg, usage, ENF_LIMIT, -1 };
		t0 = now_s();
		must_cg_write(cg, soft, val);
		/* Enforcement starts at an allocation below the watermark. */
		touch_node0_page();
		if (!wait_for(usage_at_target, &ca, 120))
			fail("soft limit: still %.0f MB after 120 s", MB_OF(cg_read_ll(cg, usage)));
		t1 = now_s();
		printf("# rep %d: %.1f -> %.1f MB in %.3f s\n", rep, MB_OF(before),
		       MB_OF(cg_read_ll(cg, usage)), t1 - t0);
		printf("BENCH bench=enforce mode=v1_soft rep=%d mb=%lu raw_mbps=%.1f enforce_mbps=%.1f ratio=%.3f\n",
		       rep, ENF_LIMIT / MB, raw, MB_OF(before - ENF_LIMIT) / (t1 - t0),
		       MB_OF(before - ENF_LIMIT) / (t1 - t0) / raw);
		stop(filler);
		stop(pid);
		cg_destroy(cg);
		free(cg);
	}
	return 0;
}

/* ---- hard-cap accuracy ------------------------------------------------------ */
#define CAP		(64 * MB)
#define CAP_TASKS	4
#define CAP_EACH	(64 * MB)

struct burst_arg {
	struct ctl *ctl;
	bool thp;
};

static int burst_main(void *p)
{
	struct burst_arg *a = p;
	size_t len = CAP_EACH + (a->thp ? 2 * MB : 0);
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED)
		return 1;
	if (a->thp) {
		buf = (char *)(((unsigned long)buf + 2 * MB - 1) & ~(2 * MB - 1));
		if (madvise(buf, CAP_EACH, MADV_HUGEPAGE))
			return 2;
	}
	while (!a->ctl->go)
		usleep(100);
	fill_pages(buf, CAP_EACH, 4);
	__sync_fetch_and_add(&a->ctl->ready, 1);
	for (;;)
		pause();
}

static int bench_hardcap(int reps)
{
	const char *root = cg2_root();
	int key;

	if (!root)
		fail("no cgroup v2");
	key = top_tier();
	for (int rep = 0; rep < 2 * reps; rep++) {
		struct burst_arg ba = { .ctl = ctl_new(), .thp = rep & 1 };
		struct timespec next;
		pid_t pids[CAP_TASKS];
		long long top = 0, peak, v, d0;
		long samples = 0;
		char *cg = cg_create(root, "cap");
		char path[512];
		int fd;

		if (!cg)
			fail("cannot create a cgroup");
		snprintf(path, sizeof(path), "%d %lu", key, CAP);
		must_cg_write(cg, "memory.tiers.max", path);
		snprintf(path, sizeof(path), "%s/memory.tiers.current", cg);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			fail("open %s: %s", path, strerror(errno));
		for (int i = 0; i < CAP_TASKS; i++)
			pids[i] = spawn_in(cg, burst_main, &ba);
		d0 = cg_tier_event(cg, key, "fallback");
		if (d0 == LLONG_MIN)
			fail("no fallback count for tier %d in memory.tiers.events", key);
		clock_gettime(CLOCK_MONOTONIC, &next);
		ba.ctl->go = 1;
		/* Sample every 10 ms, on an absolute clock, until all wrote. */
		while (ba.ctl->ready < CAP_TASKS) {
			v = fd_read_tier(fd, key);
			if (v > top)
				top = v;
			samples++;
			next.tv_nsec += 10 * 1000 * 1000;
			if (next.tv_nsec >= 1000000000L) {
				next.tv_nsec -= 1000000000L;
				next.tv_sec++;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
			if (samples > 100 * 300)
				fail("the burst did not finish in 300 s");
		}
		close(fd);
		peak = cg_tier_read(cg, "memory.tiers.peak", key);
		printf("BENCH bench=hardcap rep=%d thp=%d tasks=%d max_mb=%lu sampled_top_mb=%.3f peak_mb=%.3f overshoot_kb=%.0f peak_overshoot_kb=%.0f bound_kb=%.0f samples=%ld fallback_pages=%lld\n",
		       rep / 2, ba.thp, CAP_TASKS, CAP / MB, MB_OF(top), MB_OF(peak),
		       (top > (long long)CAP ? top - (long long)CAP : 0) / 1024.0,
		       (peak > (long long)CAP ? peak - (long long)CAP : 0) / 1024.0,
		       CAP_TASKS * (ba.thp ? 2 * (long long)MB : page_size) / 1024.0, samples,
		       cg_tier_event(cg, key, "fallback") - d0);
		for (int i = 0; i < CAP_TASKS; i++)
			stop(pids[i]);
		cg_destroy(cg);
		free(cg);
	}
	return 0;
}

/* ---- DAMON, for the protection benchmark on stock 6.12 -------------------- */
#define DAMON_ADMIN	"/sys/kernel/mm/damon/admin/kdamonds"

static void damon_write(const char *rel, const char *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", DAMON_ADMIN, rel);
	must_write(path, val);
}

/* Physical address range [start, end) of a node, from its memory blocks. */
static void node_range(int node, unsigned long long *start, unsigned long long *end)
{
	char buf[64], path[128];
	unsigned long long bs;
	long lo = -1, hi = -1;

	if (read_text("/sys/devices/system/memory/block_size_bytes", buf, sizeof(buf)) < 0)
		fail("no memory block size");
	bs = strtoull(buf, NULL, 16);
	for (long b = 0; b < 4096; b++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/memory%ld", node, b);
		if (!path_exists(path))
			continue;
		if (lo < 0)
			lo = b;
		hi = b;
	}
	if (lo < 0)
		fail("node%d has no memory blocks", node);
	*start = lo * bs;
	*end = (hi + 1) * bs;
}

/*
 * What a user of stock 6.12 would set up to keep one cgroup's hot memory
 * on the top tier: a kdamond on node0's physical range demoting cold
 * memory (migrate_cold to node1), and one on node1's range promoting hot
 * memory (migrate_hot to node0), each with a memcg filter.  6.12's filters
 * exclude what they match: with cold_others the demotion skips the cgroup
 * (it takes every other cgroup's cold memory), without it the demotion
 * takes only the cgroup's; the promotion always takes only the cgroup's.
 * DAMON's default intervals: 5 ms sampling, 100 ms aggregation.
 */
static void damon_setup(const char *memcg_path, bool cold_others)
{
	const struct {
		const char *action;
		int target_nid;
		const char *acc_min, *acc_max, *age_min;
		const char *matching;	/* 6.12 filters exclude what matches this */
	} kd[2] = {
		{ "migrate_cold", 1, "0", "0", "10", cold_others ? "Y" : "N" },
		{ "migrate_hot", 0, "1", "20", "0", "N" },
	};
	char rel[256], val[64];

	damon_write("nr_kdamonds", "2");
	for (int k = 0; k < 2; k++) {
		unsigned long long s, e;

#define W(sub, v) do { snprintf(rel, sizeof(rel), "%d/contexts/0/%s", k, sub); \
		       damon_write(rel, v); } while (0)
		snprintf(rel, sizeof(rel), "%d/contexts/nr_contexts", k);
		damon_write(rel, "1");
		W("operations", "paddr");
		W("targets/nr_targets", "1");
		W("targets/0/regions/nr_regions", "1");
		node_range(k, &s, &e);
		snprintf(val, sizeof(val), "%llu", e);
		W("targets/0/regions/0/end", val);
		snprintf(val, sizeof(val), "%llu", s);
		W("targets/0/regions/0/start", val);
		W("schemes/nr_schemes", "1");
		W("schemes/0/action", kd[k].action);
		snprintf(val, sizeof(val), "%d", kd[k].target_nid);
		W("schemes/0/target_nid", val);
		W("schemes/0/access_pattern/sz/min", "0");
		W("schemes/0/access_pattern/sz/max", "18446744073709551615");
		W("schemes/0/access_pattern/nr_accesses/max", kd[k].acc_max);
		W("schemes/0/access_pattern/nr_accesses/min", kd[k].acc_min);
		W("schemes/0/access_pattern/age/max", "4294967295");
		W("schemes/0/access_pattern/age/min", kd[k].age_min);
		W("schemes/0/filters/nr_filters", "1");
		W("schemes/0/filters/0/type", "memcg");
		W("schemes/0/filters/0/memcg_path", memcg_path);
		W("schemes/0/filters/0/matching", kd[k].matching);
#undef W
		printf("# damon: kdamond %d on node%d [%#llx, %#llx): %s to node%d\n",
		       k, k, s, e, kd[k].action, kd[k].target_nid);
		snprintf(rel, sizeof(rel), "%d/state", k);
		damon_write(rel, "on");
	}
}

static void damon_report(const char *bench)
{
	for (int k = 0; k < 2; k++) {
		char rel[128], path[256];

		snprintf(rel, sizeof(rel), "%d/state", k);
		damon_write(rel, "update_schemes_stats");
		snprintf(path, sizeof(path), "%s/%d/contexts/0/schemes/0/stats/sz_applied",
			 DAMON_ADMIN, k);
		printf("BENCH bench=%s_damon kdamond=%d sz_applied_mb=%.1f\n", bench, k,
		       MB_OF(read_ll(path)));
	}
}

/* ---- protection quality ------------------------------------------------------ */
#define HOT_SET		(128 * MB)
#define GREEDY		(1280 * MB)	/* more than node0 has */
#define PROTECT_S	40.0

struct greedy_arg {
	struct ctl *ctl;
	long long total;
};

/*
 * Allocate `total` bytes bound to node0, 8 MB at a time, and keep using
 * all of it: every page allocated so far is read again after each step,
 * and back to back once all is there.  So its memory looks as hot to the
 * LRU as the protected set does, and only a control can tell them apart.
 */
static int greedy_main(void *p)
{
	struct greedy_arg *a = p;
	enum { STEP = 8 * MB };
	char *chunks[4096];
	int n = 0;

	if (bind_to_node(0))
		return 1;
	for (;;) {
		if (a->ctl->allocated < a->total && n < (int)ARRAY_SIZE(chunks)) {
			chunks[n] = map_anon(STEP);
			if (!chunks[n])
				return 2;
			fill_pages(chunks[n++], STEP, 5);
			a->ctl->allocated += STEP;
		} else {
			a->ctl->ready = 1;
		}
		for (int i = 0; i < n; i++)
			touch_pages(chunks[i], STEP);
	}
}

static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n ? (n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : -1;
}

static int bench_protect(const char *config)
{
	const char *root = cg2_root();
	struct hot_arg ha = { .ctl = ctl_new(), .len = HOT_SET, .place_node = 0,
			      .touch = true, .period_ms = 1000 };
	struct greedy_arg ga = { .ctl = ctl_new(), .total = GREEDY };
	long long d0, p0;
	double start, last[64], min_share = 1, sum_share = 0;
	int nlast = 0, nsamples = 0;
	char *prot, *greedy;
	pid_t hot, g;

	if (!root)
		fail("no cgroup v2");
	must_write(DEMOTION, "1");
	must_write(NUMA_BALANCING, "2");
	prot = cg_create(root, "prot");
	greedy = cg_create(root, "greedy");
	if (!prot || !greedy)
		fail("cannot create the cgroups");
	if (!strcmp(config, "patched")) {
		char val[32];

		snprintf(val, sizeof(val), "%d %lu", top_tier(), HOT_SET);
		must_cg_write(prot, "memory.tiers.low", val);
	}
	hot = start_hot(prot, &ha);
	if (!strcmp(config, "damon"))
		damon_setup("/prot", true);
	d0 = vmstat_prefix("pgdemote_");
	p0 = vmstat("pgpromote_success");
	start = now_s();
	g = spawn_in(greedy, greedy_main, &ga);
	if (g <= 0)
		fail("no greedy task");
	for (double t = 0; t <= PROTECT_S; t = now_s() - start) {
		long counts[TT_MAX_NODES];
		double share;

		if (pages_of(hot, ha.ctl->addr, HOT_SET, counts))
			fail("cannot query the hot set's placement");
		share = (double)counts[0] * page_size / HOT_SET;
		if (share < min_share)
			min_share = share;
		sum_share += share;
		nsamples++;
		printf("SERIES bench=protect config=%s t=%.2f share=%.4f greedy_mb=%.0f node0_free_mb=%.0f\n",
		       config, t, share, MB_OF(ga.ctl->allocated), MB_OF(node_free(0)));
		if (t >= PROTECT_S - 10 && nlast < (int)ARRAY_SIZE(last))
			last[nlast++] = share;
		usleep(500 * 1000);	/* the sampling period */
	}
	if (!ga.ctl->ready)
		printf("# the greedy task got %.0f of %.0f MB\n", MB_OF(ga.ctl->allocated),
		       MB_OF(GREEDY));
	printf("BENCH bench=protect config=%s hot_mb=%lu greedy_mb=%.0f share_mean=%.4f share_end=%.4f share_min=%.4f demoted_mb=%.1f promoted_mb=%.1f\n",
	       config, HOT_SET / MB, MB_OF(ga.ctl->allocated), sum_share / nsamples,
	       median(last, nlast), min_share,
	       MB_OF((vmstat_prefix("pgdemote_") - d0) * page_size),
	       MB_OF((vmstat("pgpromote_success") - p0) * page_size));
	if (!strcmp(config, "damon"))
		damon_report("protect");
	stop(g);
	stop(hot);
	return 0;
}

/* ---- ping-pong ---------------------------------------------------------------- */
#define PP_CAP		(64 * MB)
#define PP_HOT		(2 * PP_CAP)
#define PP_ROOM		PP_CAP	/* node0 room above its low watermark: stock's budget */
#define PP_RUN_S	60.0
#define PP_STEADY_S	20.0	/* the steady-state window starts here */

/*
 * Every page of the hot set, twice the cap, starts on node1 and the rest
 * of node0 is mlocked down to the cap above its low watermark, so that
 * stock's budget is the patched kernel's and a demotion in this set-up is
 * a hot page going back down after a promotion.  The run counts them from the moment NUMA
 * balancing is switched on, because stock 6.12 churns most in the first
 * seconds, and again from PP_STEADY_S on, for the steady state.  Every
 * second it also reads where each page of the hot set is: a page that
 * comes back to a node it left less than a minute before is a round trip
 * (a lower bound: a page that goes and comes back between two samples is
 * not seen).
 */
static int bench_pingpong(const char *config)
{
	const char *root = cg2_root();
	struct hot_arg ha = { .ctl = ctl_new(), .len = PP_HOT, .place_node = 1, .touch = true };
	long long free0, low, tt, p0, d0, ps = 0, ds = 0, p, d;
	bool steady = false;
	double start, mins = PP_RUN_S / 60, steady_mins = (PP_RUN_S - PP_STEADY_S) / 60;
	size_t npages = PP_HOT / page_size;
	int *node = calloc(npages, sizeof(int)), *prev = calloc(npages, sizeof(int));
	double *left_at = calloc(npages, sizeof(double));
	long long trips = 0, up = 0, down = 0, hot0 = 0;
	pid_t filler, hot;
	char *cg;

	if (!node || !prev || !left_at)
		fail("out of memory");
	if (!root)
		fail("no cgroup v2");
	must_write(DEMOTION, "1");
	cg = cg_create(root, "pp");
	if (!cg)
		fail("cannot create a cgroup");
	if (!strcmp(config, "patched")) {
		char val[32];

		snprintf(val, sizeof(val), "%d %lu", top_tier(), PP_CAP);
		must_cg_write(cg, "memory.tiers.max", val);
	}
	/* The same tight top tier on both kernels: room for less than the
	 * hot set, more than the cap. */
	node0_state(&free0, &low, &tt);
	filler = start_filler(low + PP_ROOM);
	hot = start_hot(cg, &ha);	/* placed on node1 */
	p0 = vmstat("pgpromote_success");
	d0 = vmstat_prefix("pgdemote_");
	must_write(NUMA_BALANCING, "2");
	start = now_s();
	for (double t = 0; t <= PP_RUN_S; t = now_s() - start) {
		long counts[TT_MAX_NODES];

		if (t >= PP_STEADY_S && !steady) {
			steady = true;
			ps = vmstat("pgpromote_success");
			ds = vmstat_prefix("pgdemote_");
		}
		if (pages_nodes(hot, ha.ctl->addr, PP_HOT, counts, node))
			fail("cannot query the hot set's placement");
		for (size_t i = 0; i < npages; i++) {
			if (t > 0 && node[i] >= 0 && prev[i] >= 0 && node[i] != prev[i]) {
				if (node[i] < prev[i])
					up++;
				else
					down++;
				/* Back where it was less than a minute ago. */
				if (left_at[i] > 0 && t - left_at[i] <= 60)
					trips++;
				left_at[i] = t;
			}
			prev[i] = node[i];
		}
		hot0 = counts[0];
		printf("SERIES bench=pingpong config=%s t=%.2f node0_mb=%.1f promoted_mb=%.1f demoted_mb=%.1f roundtrip_pages=%lld\n",
		       config, t, MB_OF(counts[0] * page_size),
		       MB_OF((vmstat("pgpromote_success") - p0) * page_size),
		       MB_OF((vmstat_prefix("pgdemote_") - d0) * page_size), trips);
		sleep(1);	/* the sampling period */
	}
	p = vmstat("pgpromote_success");
	d = vmstat_prefix("pgdemote_");
	printf("BENCH bench=pingpong config=%s hot_mb=%lu cap_mb=%lu run_s=%.0f steady_from_s=%.0f promoted_mb_per_min=%.1f demoted_mb_per_min=%.1f roundtrip_mb_per_min=%.1f steady_promoted_mb_per_min=%.1f steady_demoted_mb_per_min=%.1f sampled_up_mb_per_min=%.1f sampled_down_mb_per_min=%.1f sampled_roundtrip_mb_per_min=%.2f hot_on_node0_mb=%.1f\n",
	       config, PP_HOT / MB, !strcmp(config, "patched") ? PP_CAP / MB : 0, PP_RUN_S,
	       PP_STEADY_S,
	       MB_OF((p - p0) * page_size) / mins, MB_OF((d - d0) * page_size) / mins,
	       MB_OF((d - d0 < p - p0 ? d - d0 : p - p0) * page_size) / mins,
	       MB_OF((p - ps) * page_size) / steady_mins, MB_OF((d - ds) * page_size) / steady_mins,
	       MB_OF(up * page_size) / mins, MB_OF(down * page_size) / mins,
	       MB_OF(trips * page_size) / mins, MB_OF(hot0 * page_size));
	free(node);
	free(prev);
	free(left_at);
	stop(hot);
	stop(filler);
	return 0;
}

/* ---- hot set in budget ------------------------------------------------------ */
#define HB_CAP		(64 * MB)
#define HB_HOT		(32 * MB)
#define HB_ROOM		(8 * (long long)MB)	/* node0 free above low after the cold data */
#define HB_RUN_S	60.0
#define HB_GOAL_S	30.0

/*
 * A cgroup's top-tier budget (memory.tiers.max 64M on the patched kernel)
 * is full of cold data; a 32 MB region of the same cgroup, written on
 * node1, is then read back to back with numa_balancing=2.  The rest of
 * node0 is mlocked on both kernels, so that the hot region gets in only if
 * cold pages go out.  Stock has no cap: its reference is how fast its own
 * reclaim makes room; DAMON demotes the cgroup's cold and promotes its hot
 * memory.
 */
static int bench_hotset(const char *config)
{
	const char *root = cg2_root();
	struct hot_arg cold = { .ctl = ctl_new(), .len = HB_CAP, .place_node = 0 };
	struct hot_arg hot = { .ctl = ctl_new(), .len = HB_HOT, .place_node = 1, .touch = true };
	long long free, low, tt, p0, d0;
	double start, t90 = -1, at_goal = -1, end = 0;
	pid_t filler, cold_pid, hot_pid;
	char *cg;

	if (!root)
		fail("no cgroup v2");
	must_write(DEMOTION, "1");
	cg = cg_create(root, "budget");
	if (!cg)
		fail("cannot create a cgroup");
	if (!strcmp(config, "patched")) {
		char val[32];

		snprintf(val, sizeof(val), "%d %lu", top_tier(), HB_CAP);
		must_cg_write(cg, "memory.tiers.max", val);
	}
	node0_state(&free, &low, &tt);
	filler = start_filler(low + HB_CAP + HB_ROOM);
	cold_pid = start_hot(cg, &cold);	/* written on node0, never read again */
	if (!strcmp(config, "damon"))
		damon_setup("/budget", false);
	p0 = vmstat("pgpromote_success");
	d0 = vmstat_prefix("pgdemote_");
	must_write(NUMA_BALANCING, "2");
	hot_pid = start_hot(cg, &hot);		/* written on node1, then read */
	start = now_s();
	for (double t = 0; t <= HB_RUN_S; t = now_s() - start) {
		long counts[TT_MAX_NODES];
		double share;

		if (pages_of(hot_pid, hot.ctl->addr, HB_HOT, counts))
			fail("cannot query the hot region's placement");
		share = (double)counts[0] * page_size / HB_HOT;
		if (share >= 0.9 && t90 < 0)
			t90 = t;
		if (t <= HB_GOAL_S)
			at_goal = share;
		end = share;
		printf("SERIES bench=hotset config=%s t=%.2f share=%.4f cg_node0_mb=%.1f\n",
		       config, t, share, MB_OF(cg2_numa_upto_tier(cg, top_tier())));
		sleep(1);	/* the sampling period */
	}
	printf("BENCH bench=hotset config=%s cap_mb=%lu hot_mb=%lu t90_s=%.1f share_at_30s=%.4f "
	       "share_end=%.4f cg_node0_mb=%.1f promoted_mb=%.1f demoted_mb=%.1f\n",
	       config, !strcmp(config, "patched") ? HB_CAP / MB : 0, HB_HOT / MB, t90, at_goal,
	       end, MB_OF(cg2_numa_upto_tier(cg, top_tier())),
	       MB_OF((vmstat("pgpromote_success") - p0) * page_size),
	       MB_OF((vmstat_prefix("pgdemote_") - d0) * page_size));
	if (!strcmp(config, "damon"))
		damon_report("hotset");
	stop(hot_pid);
	stop(cold_pid);
	stop(filler);
	return 0;
}

/* ---- three tiers --------------------------------------------------------------- */
#define T3_HOT		(48 * MB)
#define T3_WARM		(96 * MB)
#define T3_COLD		(192 * MB)
#define T3_MAX0		(64 * (long long)MB)	/* the fastest tier */
#define T3_MAX1		(192 * (long long)MB)	/* the two faster tiers */
#define T3_RUN_S	90.0
#define T3_TOL		(4 * (long long)MB)

/*
 * On 3tier (node0 10 ns, node1 30 ns, node2 90 ns in HMAT), one cgroup
 * with memory.tiers.max at both boundaries: 64M for node0's tier, 192M
 * for node0's and node1's.  It writes a cold set (never read again), then
 * a warm set (read every 2 s), then a hot set (read back to back), so the
 * hot set starts where the limits leave room, at the bottom; then NUMA
 * balancing (mode 2) runs for 90 s.  Reported: each set's MB per node
 * over time, and the largest reading of either line.
 */
static int bench_threetier(void)
{
	const char *root = cg2_root();
	struct hot_arg set[3] = {
		{ .ctl = ctl_new(), .len = T3_COLD, .place_node = -1 },
		{ .ctl = ctl_new(), .len = T3_WARM, .place_node = -1, .touch = true,
		  .period_ms = 2000 },
		{ .ctl = ctl_new(), .len = T3_HOT, .place_node = -1, .touch = true },
	};
	static const char *const names[3] = { "cold", "warm", "hot" };
	int key0 = tier_of_node(0), key1 = tier_of_node(1);
	long long line0, line1, max0 = 0, max1 = 0;
	long counts[3][TT_MAX_NODES];
	pid_t pid[3];
	double start;
	char val[64], *cg;

	if (!root)
		fail("no cgroup v2");
	if (key0 < 0 || key1 < 0 || key0 == key1 || tier_of_node(2) == key1)
		fail("not three tiers (node0 %d, node1 %d, node2 %d)", key0, key1,
		     tier_of_node(2));
	must_write(DEMOTION, "1");
	cg = cg_create(root, "three");
	if (!cg)
		fail("cannot create a cgroup");
	snprintf(val, sizeof(val), "%d %lld\n%d %lld", key0, T3_MAX0, key1, T3_MAX1);
	must_cg_write(cg, "memory.tiers.max", val);
	for (int i = 0; i < 3; i++)
		pid[i] = start_hot(cg, &set[i]);
	must_write(NUMA_BALANCING, "2");
	start = now_s();
	for (double t = 0; t <= T3_RUN_S; t = now_s() - start) {
		line0 = cg_tier_read(cg, "memory.tiers.current", key0);
		line1 = cg_tier_read(cg, "memory.tiers.current", key1);
		if (line0 > max0)
			max0 = line0;
		if (line1 > max1)
			max1 = line1;
		printf("SERIES bench=threetier t=%.1f line0_mb=%.1f line1_mb=%.1f", t,
		       MB_OF(line0), MB_OF(line1));
		for (int i = 0; i < 3; i++) {
			if (pages_of(pid[i], set[i].ctl->addr, set[i].len, counts[i]))
				fail("cannot query the %s set", names[i]);
			for (int n = 0; n < 3; n++)
				printf(" %s_n%d_mb=%.1f", names[i], n, MB_OF(counts[i][n] * page_size));
		}
		printf("\n");
		sleep(1);	/* the sampling period */
	}
	printf("BENCH bench=threetier max0_mb=%.0f max1_mb=%.0f line0_max_mb=%.1f line1_max_mb=%.1f "
	       "held=%d", MB_OF(T3_MAX0), MB_OF(T3_MAX1), MB_OF(max0), MB_OF(max1),
	       max0 <= T3_MAX0 + T3_TOL && max1 <= T3_MAX1 + T3_TOL);
	for (int i = 0; i < 3; i++)
		for (int n = 0; n < 3; n++)
			printf(" %s_n%d_mb=%.1f", names[i], n, MB_OF(counts[i][n] * page_size));
	printf("\n");
	for (int i = 0; i < 3; i++)
		stop(pid[i]);
	return 0;
}

/* ---- late victim ------------------------------------------------------------ */
/*
 * Joshua Hahn's experiment (tier-aware memcg limits RFC v2) scaled to the
 * guest: 3:1 DRAM to CXL (run.sh boots 1536 + 512 MB), four cgroups of
 * about 22% of all memory each, three "hogs" started first, a "victim"
 * LV_HEAD_S later, all reading their working sets at random, NUMA
 * balancing in mode 2.  The fair share is a quarter of what node0 had
 * free above its high watermark before any of them started.
 */
#define LV_NCG		4
#define LV_WS_PCT	22	/* each working set, % of all memory */
#define LV_HEAD_S	20.0	/* the hogs run alone this long */
#define LV_RUN_S	90.0	/* then the victim, this long */
#define LV_TAIL_S	10.0	/* "at the end": the median of the last seconds */

struct reader_arg {
	struct ctl *ctl;
	size_t len;
};

/* Fill len bytes, then read one byte of a random page of them, for ever. */
static int reader_main(void *p)
{
	struct reader_arg *a = p;
	char *buf = map_anon(a->len);
	size_t npages = a->len / page_size;
	uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL | 1;
	uint64_t sum = 0;

	if (!buf)
		return 1;
	fill_pages(buf, a->len, getpid());
	a->ctl->addr = buf;
	a->ctl->len = a->len;
	a->ctl->ready = 1;
	for (;;) {
		for (int i = 0; i < 4096; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			sum += buf[(x % npages) * page_size + (x >> 52)];
		}
		a->ctl->ops += 4096;
		asm volatile("" : "+r" (sum));
	}
}

/* HMAT read latency from node0's CPUs to a node, in ns; 0 if not known. */
static long long read_latency(int node)
{
	char path[128];
	long long v;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/node/node%d/access0/initiators/read_latency", node);
	v = read_ll(path);
	return v == LLONG_MIN ? 0 : v;
}

static int bench_victim(const char *config)
{
	static const char *const names[LV_NCG] = { "hog1", "hog2", "hog3", "victim" };
	const char *root = cg2_root();
	struct reader_arg ra[LV_NCG];
	char *cg[LV_NCG], val[64];
	pid_t pid[LV_NCG];
	long long free0, high0, fair, ws, total = 0, last[LV_NCG][64], ops0 = 0;
	long long lat[2] = { read_latency(0), read_latency(1) };
	int key = top_tier(), nlast = 0;
	double start, converged = -1;

	if (!root)
		fail("no cgroup v2");
	for (int n = 0; n < TT_MAX_NODES; n++)
		if (node_total(n) > 0)
			total += node_total(n);
	ws = total * LV_WS_PCT / 100 / (long long)page_size * page_size;
	node_free_wmark(0, TT_WMARK_HIGH, &free0, &high0);
	fair = (free0 - high0) / LV_NCG;
	if (fair <= 0 || ws < fair)
		fail("node0 has %lld MB free above high, a working set is %lld MB",
		     (long long)MB_OF(free0 - high0), (long long)MB_OF(ws));
	must_write(DEMOTION, "1");
	if (!strcmp(config, "auto") &&
	    mount(NULL, root, NULL, MS_REMOUNT, "memory_tiers_auto") != 0)
		fail("remount with memory_tiers_auto: %s", strerror(errno));
	for (int i = 0; i < LV_NCG; i++) {
		cg[i] = cg_create(root, names[i]);
		if (!cg[i])
			fail("cannot create %s", names[i]);
		if (!strcmp(config, "low")) {
			snprintf(val, sizeof(val), "%d %lld", key, fair);
			must_cg_write(cg[i], "memory.tiers.low", val);
		} else if (!strcmp(config, "auto")) {
			/* What Kubernetes memory QoS writes for a pod's request. */
			snprintf(val, sizeof(val), "%lld", ws);
			must_cg_write(cg[i], "memory.min", val);
		}
	}
	printf("# victim: %s; working sets %lld MB each, fair share %lld MB of node0 "
	       "(free %lld MB, high watermark %lld MB); HMAT read latency %lld / %lld ns\n",
	       config, (long long)MB_OF(ws), (long long)MB_OF(fair), (long long)MB_OF(free0),
	       (long long)MB_OF(high0), lat[0], lat[1]);
	if (!strcmp(config, "auto")) {
		char path[512], buf[256];

		snprintf(path, sizeof(path), "%s/memory.tiers.low", cg[0]);
		if (read_text(path, buf, sizeof(buf)) < 0)
			fail("cannot read %s", path);
		buf[strcspn(buf, "\n")] = 0;
		printf("# memory.min %lld MB, memory_tiers_auto: memory.tiers.low reads \"%s\"\n",
		       (long long)MB_OF(ws), buf);
	}
	must_write(NUMA_BALANCING, "2");
	if (!strcmp(config, "damon"))
		damon_setup("/victim", true);

	for (int i = 0; i < LV_NCG; i++) {
		ra[i] = (struct reader_arg){ .ctl = ctl_new(), .len = ws };
		if (i == LV_NCG - 1) {
			/* The hogs are in: their head start, then the victim. */
			for (int j = 0; j < i; j++)
				if (!wait_for(is_ready, ra[j].ctl, 120))
					fail("%s did not fill its working set", names[j]);
			usleep(LV_HEAD_S * 1e6);
			start = now_s();
		}
		pid[i] = spawn_in(cg[i], reader_main, &ra[i]);
		if (pid[i] <= 0)
			fail("cannot start %s", names[i]);
	}
	for (double t = 0; t <= LV_RUN_S; t = now_s() - start) {
		long long top[LV_NCG];
		bool all = true;

		for (int i = 0; i < LV_NCG; i++)
			top[i] = cg2_numa_upto_tier(cg[i], key);
		printf("SERIES bench=victim config=%s t=%.1f", config, t);
		for (int i = 0; i < LV_NCG; i++)
			printf(" %s_mb=%.1f", names[i], MB_OF(top[i]));
		printf(" victim_ready=%d\n", ra[LV_NCG - 1].ctl->ready);
		if (top[LV_NCG - 1] < fair * 9 / 10)
			all = false;
		if (all && converged < 0)
			converged = t;
		else if (!all)
			converged = -1;
		if (t >= LV_RUN_S - LV_TAIL_S && nlast < 64) {
			for (int i = 0; i < LV_NCG; i++)
				last[i][nlast] = top[i];
			if (!nlast)
				ops0 = ra[LV_NCG - 1].ctl->ops;
			nlast++;
		}
		sleep(1);	/* the sampling period */
	}
	{
		double vops = (ra[LV_NCG - 1].ctl->ops - ops0) / LV_TAIL_S;
		double end[LV_NCG], cost;

		for (int i = 0; i < LV_NCG; i++) {
			double v[64];

			for (int j = 0; j < nlast; j++)
				v[j] = last[i][j];
			end[i] = median(v, nlast);
		}
		/* A model, not a measurement: uniform random reads cost the HMAT
		 * latency of the node they hit, so a read of the victim costs
		 * its share on node0 times node0's latency plus the rest times
		 * node1's. */
		cost = (end[LV_NCG - 1] * lat[0] + (ws - end[LV_NCG - 1]) * lat[1]) / ws;
		printf("BENCH bench=victim config=%s ws_mb=%.0f fair_mb=%.0f", config, MB_OF(ws),
		       MB_OF(fair));
		for (int i = 0; i < LV_NCG; i++)
			printf(" %s_mb=%.1f %s_share=%.4f", names[i], MB_OF(end[i]), names[i],
			       end[i] / fair);
		printf(" converge_s=%.1f run_s=%.0f lat0_ns=%lld lat1_ns=%lld model_ns_per_read=%.2f "
		       "victim_reads_per_s=%.0f\n", converged, LV_RUN_S, lat[0], lat[1], cost, vops);
	}
	if (!strcmp(config, "damon"))
		damon_report("victim");
	for (int i = 0; i < LV_NCG; i++)
		stop(pid[i]);
	if (!strcmp(config, "auto"))
		mount(NULL, root, NULL, MS_REMOUNT, "");
	return 0;
}

int main(void)
{
	const char *bench = param("bench", "");
	const char *config = param("bench_config", "patched");
	int reps;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	signal(SIGPIPE, SIG_IGN);
	reps = atoi(param("bench_reps", "5"));
	if (reps < 1)
		reps = 1;
	printf("# tierbench %s config=%s reps=%d\n", bench, config, reps);
	if (!strcmp(bench, "enforce"))
		return bench_enforce(reps);
	if (!strcmp(bench, "enforce_v1"))
		return bench_enforce_v1(reps);
	if (!strcmp(bench, "hardcap"))
		return bench_hardcap(reps);
	if (!strcmp(bench, "protect"))
		return bench_protect(config);
	if (!strcmp(bench, "pingpong"))
		return bench_pingpong(config);
	if (!strcmp(bench, "threetier"))
		return bench_threetier();
	if (!strcmp(bench, "hotset"))
		return bench_hotset(config);
	if (!strcmp(bench, "victim"))
		return bench_victim(config);
	fail("unknown benchmark '%s' (toptier.bench=)", bench);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tiers.max (cgroup v2): a hard cap, line by line, on a cgroup's
 * pages in a tier and every faster one ("N value", N the tier's key in
 * /sys/devices/virtual/memory_tiering, read from sysfs).  At the cap of
 * line N, new user pages come from the nearest slower tier; lowering a cap
 * demotes the excess at once, without swapping; a parent's cap covers its
 * children; memory.tiers.events and memory.stat count what happened.
 * Values parse like memory.max, and bad ones are refused with EINVAL.
 *
 * On 2tier the file has the one line of node0's tier, and these cases are
 * those of the former memory.toptier.max.  On 3tier the line of node1's
 * tier counts node0 + node1: its cap sends the rest to node2, while a cap
 * on node0's line alone sends it to node1.
 *
 * The bound: a line of memory.tiers.current may exceed its max by the
 * allocations in flight between the check and the charge, one folio per
 * allocating task.  TOL below is far above that and covers the few pages
 * a cgroup has besides the test's.
 *
 * toptier-test: topology=2tier,3tier timeout=900
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt.h"

#define MAX		"memory.tiers.max"
#define CURRENT		"memory.tiers.current"
#define TOL		(4LL * (long long)MB)
#define MBS(x)		((x) / (long long)MB)

static struct tt_tier tiers[TT_MAX_TIERS];
static int ntiers;
/* The keys of the tiers of node0 and node1 (node k is alone in tier k). */
#define K0 (tiers[0].key)
#define K1 (tiers[1].key)

static struct holder *holders[2];


static void filler_stop(void);

static void cleanup(void)
{
	filler_stop();
	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	tt_release_all();
	tt_restore_mglru();
}

/* The workbench's topologies: node k alone in the k-th tier. */
static bool tiers_ok(int want)
{
	if (ntiers < want) {
		tt_diag("%d memory tiers with memory, want %d", ntiers, want);
		return false;
	}
	for (int i = 0; i < ntiers; i++)
		if (!tiers[i].nodes[i] || tiers[i].nnodes != 1) {
			tt_diag("memory_tier%d does not hold node%d alone", tiers[i].key, i);
			return false;
		}
	return true;
}

static bool three_tiers(void)
{
	if (ntiers >= 3)
		return true;
	tt_skip_reason("needs two tiers below node0's (3tier)");
	return false;
}

static long long node_bytes(struct holder *h, int node)
{
	long counts[TT_MAX_NODES];

	return holder_count(h, counts) ? -1 : (long long)counts[node] * page_size;
}

static int set_max(const char *cg, int key, const char *val)
{
	return cg_tier_write(cg, MAX, key, val);
}

static long long current(const char *cg, int key)
{
	return cg_tier_read(cg, CURRENT, key);
}

/*
 * A sampler: a child that reads one line of a cgroup's memory.tiers.current
 * every 10 ms and keeps the largest value in shared memory until it is
 * stopped.
 */
struct sampler {
	pid_t pid;
	volatile long long *peak;
};

static volatile sig_atomic_t sampler_stop;

static void sampler_on_term(int sig)
{
	(void)sig;
	sampler_stop = 1;
}

static bool sampler_start(struct sampler *s, const char *cg, int key)
{
	s->peak = mmap(NULL, sizeof(*s->peak), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s->peak == MAP_FAILED)
		return false;
	*s->peak = -1;
	fflush(stdout);
	s->pid = fork();
	if (s->pid < 0)
		return false;
	if (s->pid == 0) {
		signal(SIGTERM, sampler_on_term);
		while (!sampler_stop) {
			long long v = current(cg, key);

			if (v > *s->peak)
				*s->peak = v;
			usleep(10 * 1000);	/* the sampling period */
		}
		_exit(0);
	}
	return true;
}

static long long sampler_stop_read(struct sampler *s)
{
	long long v;

	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
	v = *s->peak;
	munmap((void *)s->peak, sizeof(*s->peak));
	return v;
}

/* ---- cases ------------------------------------------------------------------ */
static enum tt_result parse_body(void)
{
	const struct {
		const char *in;
		long long want;		/* -1: reads back as "max" */
	} good[] = {
		{ "256M", 256LL << 20 },
		{ "1G\n", 1LL << 30 },
		{ "64k", 64LL << 10 },
		{ "1234567", 1234567 / page_size * page_size },
		{ "max", -1 },
		{ "0", 0 },
		{ "8E", -1 },		/* beyond the page counter: clamped, as memory.max */
	};
	/* "\n" is what echo "" writes; a zero-length write never reaches the file. */
	static const char *const bad[] = {
		"\n", "-1", "abc", "12Q", "1.5G", "+5", " 5 5", "5 M", "0x10",
		"99999999999999999999", "16E", "max1", "MAX",
	};
	const char *root = cg2_root();
	char path[512], line[128];
	char *cg;

	TT_EXPECT(root, "no cgroup2 hierarchy with the memory controller");
	TT_EXPECT(tiers_ok(2), "the memory tiers are not the workbench's");
	snprintf(path, sizeof(path), "%s/%s", root, MAX);
	TT_EXPECT(!path_exists(path), "%s exists on the root cgroup", MAX);
	cg = tt_cgroup(root, "tt_v2_parse");
	TT_EXPECT(cg, "cannot create the cgroup");
	for (int i = 0; i < ntiers - 1; i++)
		TT_EXPECT(cg_tier_read(cg, MAX, tiers[i].key) == TT_TIER_MAX,
			  "default %s line %d is %lld, want max", MAX, tiers[i].key,
			  cg_tier_read(cg, MAX, tiers[i].key));
	TT_EXPECT(cg_tier_event(cg, K0, "max") == 0, "a new cgroup's max events: %lld",
		  cg_tier_event(cg, K0, "max"));

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		long long got;
		int err;

		snprintf(line, sizeof(line), "%d %s", K0, good[i].in);
		err = cg_write(cg, MAX, line);
		TT_EXPECT(err == 0, "writing \"%d %s\": %s", K0, good[i].in, strerror(-err));
		got = cg_tier_read(cg, MAX, K0);
		TT_EXPECT(got == (good[i].want < 0 ? TT_TIER_MAX : good[i].want),
			  "\"%d %s\" reads back as %lld, want %lld (-1: max)", K0, good[i].in,
			  got, good[i].want);
		/* The other lines are left alone. */
		for (int t = 1; t < ntiers - 1; t++)
			TT_EXPECT(cg_tier_read(cg, MAX, tiers[t].key) == TT_TIER_MAX,
				  "writing line %d changed line %d to %lld", K0, tiers[t].key,
				  cg_tier_read(cg, MAX, tiers[t].key));
	}
	TT_EXPECT(set_max(cg, K0, "300M") == 0, "writing 300M failed");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err;

		snprintf(line, sizeof(line), "%d %s", K0, bad[i]);
		err = cg_write(cg, MAX, line);
		TT_EXPECT(err == -EINVAL, "writing \"%d %s\" gave %s, want EINVAL", K0, bad[i],
			  err ? strerror(-err) : "success");
		TT_EXPECT(cg_tier_read(cg, MAX, K0) == 300LL << 20,
			  "after \"%d %s\" the limit is %lld", K0, bad[i],
			  cg_tier_read(cg, MAX, K0));
	}
	return TT_PASS;
}

/*
 * The cap of node0's line holds at every 10 ms sample while an 800 MB
 * writer runs; the rest lands on node1, the nearest slower tier (on 3tier
 * not on node2).
 */
static enum tt_result cap_body(void)
{
	const long long len = 800 * MB, max = 256 * MB;
	char *cg = tt_cgroup(cg2_root(), "tt_v2_cap");
	long long oom0 = vmstat("oom_kill"), sw0 = vmstat("pswpout"), peak, n0, n1, n2 = 0, ev;
	struct sampler s;

	TT_EXPECT(oom0 != LLONG_MIN && sw0 != LLONG_MIN, "no oom_kill or pswpout in /proc/vmstat");
	TT_EXPECT(tiers_ok(2), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(set_max(cg, K0, "256M") == 0, "cannot set %s", MAX);
	TT_EXPECT(sampler_start(&s, cg, K0), "cannot start the sampler");
	holders[0] = holder_start(cg, len, 7, false);
	peak = sampler_stop_read(&s);
	TT_EXPECT(holders[0], "no holder (was it OOM-killed?)");
	n0 = node_bytes(holders[0], 0);
	n1 = node_bytes(holders[0], 1);
	if (ntiers >= 3)
		n2 = node_bytes(holders[0], 2);
	ev = cg_tier_event(cg, K0, "max");
	tt_diag("sampled peak of %s line %d: %lld MB (max 256 MB); node0 %lld MB, node1 %lld MB, "
		"node2 %lld MB; max events %lld", CURRENT, K0, MBS(peak), MBS(n0), MBS(n1),
		MBS(n2), ev);
	TT_EXPECT(peak >= max - TOL, "premise: the cgroup never reached its cap (%lld MB)",
		  MBS(peak));
	TT_EXPECT(peak <= max + TOL, "%s line %d reached %lld MB, over max 256 MB", CURRENT, K0,
		  MBS(peak));
	TT_EXPECT(n0 >= 0 && n0 <= max + TOL, "%lld MB on node0", MBS(n0));
	TT_EXPECT(n1 >= len - max - TOL, "only %lld MB on node1", MBS(n1));
	TT_EXPECT(n2 >= 0 && n2 <= TOL, "%lld MB on node2, not the nearest slower tier", MBS(n2));
	TT_EXPECT(ev > 0, "no max events counted");
	TT_EXPECT(cg_tier_event(cg, K0, "fallback") == 0,
		  "allocations fell back to node0 although node1 had room");
	if (ntiers >= 3) {
		long long c1 = current(cg, K1);

		TT_EXPECT(c1 >= len - TOL && c1 <= len + TOL,
			  "line %d (node0 + node1) is %lld MB, want %lld", K1, MBS(c1), MBS(len));
		TT_EXPECT(cg_tier_event(cg, K1, "max") == 0,
			  "%lld max events on line %d, which has no limit",
			  cg_tier_event(cg, K1, "max"), K1);
	}
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
	TT_EXPECT(vmstat("oom_kill") == oom0, "something was OOM-killed");
	TT_EXPECT(vmstat("pswpout") == sw0, "pages were swapped out");
	return TT_PASS;
}

/* Lowering max below current demotes the excess before the write returns. */
static enum tt_result lower_body(bool mglru)
{
	const long long len = 300 * MB, max = 100 * MB;
	char name[32];
	char *cg;
	long long sw0 = vmstat("pswpout"), cur, n1, demoted;

	TT_EXPECT(tiers_ok(2), "the memory tiers are not the workbench's");
	TT_EXPECT(tt_set_mglru(mglru) == 0, "cannot turn MGLRU %s", mglru ? "on" : "off");
	snprintf(name, sizeof(name), "tt_v2_lower_%s", mglru ? "mglru" : "classic");
	cg = tt_cgroup(cg2_root(), name);
	TT_EXPECT(cg, "cannot create the cgroup");
	holders[0] = holder_start(cg, len, 8, false);
	TT_EXPECT(holders[0], "no holder");
	TT_EXPECT(current(cg, K0) >= len - TOL, "premise: only %lld MB on node0",
		  MBS(current(cg, K0)));
	TT_EXPECT(cg_read_key(cg, "memory.stat", "pgdemote_tierlimit") == 0,
		  "premise: pgdemote_tierlimit is %lld before any limit",
		  cg_read_key(cg, "memory.stat", "pgdemote_tierlimit"));
	TT_EXPECT(set_max(cg, K0, "100M") == 0, "cannot lower %s", MAX);
	cur = current(cg, K0);
	n1 = node_bytes(holders[0], 1);
	demoted = cg_read_key(cg, "memory.stat", "pgdemote_tierlimit");
	tt_diag("after the write: line %d %lld MB, node1 %lld MB, pgdemote_tierlimit %lld", K0,
		MBS(cur), MBS(n1), demoted);
	TT_EXPECT(cur >= 0 && cur <= max + TOL, "line %d %lld MB after lowering max to 100 MB",
		  K0, MBS(cur));
	TT_EXPECT(cur >= max - 16 * (long long)MB, "demoted far below max: %lld MB", MBS(cur));
	TT_EXPECT(n1 >= len - max - TOL, "only %lld MB on node1", MBS(n1));
	TT_EXPECT(demoted * page_size >= len - max - TOL, "pgdemote_tierlimit %lld pages", demoted);
	TT_EXPECT(vmstat("pswpout") == sw0, "pages were swapped out");
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
	return TT_PASS;
}

/* A parent's max caps the sum of its children. */
static enum tt_result parent_body(void)
{
	const long long len = 300 * MB, max = 256 * MB;
	char *p = tt_cgroup(cg2_root(), "tt_v2_pmax");
	char *c1, *c2;
	long long peak, total;
	struct sampler s;

	TT_EXPECT(tiers_ok(2), "the memory tiers are not the workbench's");
	TT_EXPECT(p && cg_write(p, "cgroup.subtree_control", "+memory") == 0,
		  "cannot create the parent");
	c1 = tt_cgroup(p, "c1");
	c2 = tt_cgroup(p, "c2");
	TT_EXPECT(c1 && c2, "cannot create the children");
	TT_EXPECT(set_max(p, K0, "256M") == 0, "cannot set the parent's %s", MAX);
	TT_EXPECT(sampler_start(&s, p, K0), "cannot start the sampler");
	holders[0] = holder_start(c1, len, 9, false);
	holders[1] = holder_start(c2, len, 10, false);
	peak = sampler_stop_read(&s);
	TT_EXPECT(holders[0] && holders[1], "no holders");
	total = node_bytes(holders[0], 0) + node_bytes(holders[1], 0);
	tt_diag("parent: sampled peak %lld MB, children on node0 %lld MB in all; "
		"max events c1 %lld, parent %lld", MBS(peak), MBS(total),
		cg_tier_event(c1, K0, "max"), cg_tier_event(p, K0, "max"));
	TT_EXPECT(peak <= max + TOL, "the parent reached %lld MB", MBS(peak));
	TT_EXPECT(total <= max + TOL, "the children hold %lld MB on node0", MBS(total));
	TT_EXPECT(cg_tier_event(p, K0, "max") > 0, "the parent counted no max events");
	return TT_PASS;
}

/*
 * 3tier: the cap of node1's line bounds node0 + node1 together, the rest
 * goes to node2; node0's line, without a limit, is not charged events.
 */
static enum tt_result tier1_cap_body(void)
{
	const long long len = 800 * MB, max = 256 * MB;
	long long oom0 = vmstat("oom_kill"), peak, n0, n1, n2, ev;
	struct sampler s;
	char *cg;

	if (!three_tiers())
		return TT_SKIP;
	TT_EXPECT(tiers_ok(3), "the memory tiers are not the workbench's");
	cg = tt_cgroup(cg2_root(), "tt_v2_cap1");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(set_max(cg, K1, "256M") == 0, "cannot set %s line %d", MAX, K1);
	TT_EXPECT(cg_tier_read(cg, MAX, K0) == TT_TIER_MAX, "line %d changed to %lld", K0,
		  cg_tier_read(cg, MAX, K0));
	TT_EXPECT(sampler_start(&s, cg, K1), "cannot start the sampler");
	holders[0] = holder_start(cg, len, 14, false);
	peak = sampler_stop_read(&s);
	TT_EXPECT(holders[0], "no holder (was it OOM-killed?)");
	n0 = node_bytes(holders[0], 0);
	n1 = node_bytes(holders[0], 1);
	n2 = node_bytes(holders[0], 2);
	ev = cg_tier_event(cg, K1, "max");
	tt_diag("max %d 256M: sampled peak of line %d %lld MB; node0 %lld MB, node1 %lld MB, "
		"node2 %lld MB; max events %lld (line %d: %lld)", K1, K1, MBS(peak), MBS(n0),
		MBS(n1), MBS(n2), ev, K0, cg_tier_event(cg, K0, "max"));
	TT_EXPECT(peak >= max - TOL, "premise: line %d never reached its cap (%lld MB)", K1,
		  MBS(peak));
	TT_EXPECT(peak <= max + TOL, "line %d reached %lld MB, over max 256 MB", K1, MBS(peak));
	TT_EXPECT(n0 >= 0 && n1 >= 0 && n0 + n1 <= max + TOL,
		  "node0 + node1 hold %lld MB, over max 256 MB", MBS(n0 + n1));
	TT_EXPECT(n2 >= len - max - TOL, "only %lld MB on node2", MBS(n2));
	TT_EXPECT(current(cg, K0) <= current(cg, K1), "line %d (%lld MB) above line %d "
		  "(%lld MB)", K0, MBS(current(cg, K0)), K1, MBS(current(cg, K1)));
	TT_EXPECT(ev > 0, "no max events counted on line %d", K1);
	TT_EXPECT(cg_tier_event(cg, K0, "max") == 0, "max events on line %d, which has no limit",
		  K0);
	TT_EXPECT(cg_tier_event(cg, K1, "fallback") == 0,
		  "allocations fell back although node2 had room");
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
	TT_EXPECT(vmstat("oom_kill") == oom0, "something was OOM-killed");
	return TT_PASS;
}

/*
 * 3tier: both lines set in one write, each cap holds at its own boundary:
 * node0 up to 64 MB, node0 + node1 up to 256 MB, the rest on node2.
 */
static enum tt_result both_caps_body(void)
{
	const long long len = 400 * MB, max0 = 64 * MB, max1 = 256 * MB;
	long long n0, n1, n2;
	char *cg, buf[128];

	if (!three_tiers())
		return TT_SKIP;
	TT_EXPECT(tiers_ok(3), "the memory tiers are not the workbench's");
	cg = tt_cgroup(cg2_root(), "tt_v2_caps");
	TT_EXPECT(cg, "cannot create the cgroup");
	snprintf(buf, sizeof(buf), "%d 64M\n%d 256M\n", K0, K1);
	TT_EXPECT(cg_write(cg, MAX, buf) == 0, "cannot write both lines of %s", MAX);
	TT_EXPECT(cg_tier_read(cg, MAX, K0) == max0 && cg_tier_read(cg, MAX, K1) == max1,
		  "the lines read %lld and %lld", cg_tier_read(cg, MAX, K0),
		  cg_tier_read(cg, MAX, K1));
	holders[0] = holder_start(cg, len, 15, false);
	TT_EXPECT(holders[0], "no holder (was it OOM-killed?)");
	n0 = node_bytes(holders[0], 0);
	n1 = node_bytes(holders[0], 1);
	n2 = node_bytes(holders[0], 2);
	tt_diag("max %d 64M, %d 256M: node0 %lld MB, node1 %lld MB, node2 %lld MB; lines %lld "
		"and %lld MB; max events %lld and %lld", K0, K1, MBS(n0), MBS(n1), MBS(n2),
		MBS(current(cg, K0)), MBS(current(cg, K1)), cg_tier_event(cg, K0, "max"),
		cg_tier_event(cg, K1, "max"));
	TT_EXPECT(n0 >= 0 && n0 <= max0 + TOL, "%lld MB on node0, over 64 MB", MBS(n0));
	TT_EXPECT(n1 >= 0 && n0 + n1 <= max1 + TOL, "node0 + node1 hold %lld MB, over 256 MB",
		  MBS(n0 + n1));
	TT_EXPECT(n1 >= max1 - max0 - 2 * TOL, "only %lld MB on node1: node0's overflow did not "
		  "go to the nearest slower tier", MBS(n1));
	TT_EXPECT(n2 >= len - max1 - TOL, "only %lld MB on node2", MBS(n2));
	TT_EXPECT(cg_tier_event(cg, K0, "max") > 0 && cg_tier_event(cg, K1, "max") > 0,
		  "max events not counted on both lines");
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
	return TT_PASS;
}

/* 3tier: lowering the cap of node1's line demotes the excess to node2. */
static enum tt_result lower_tier1_body(void)
{
	const long long len = 300 * MB, max = 100 * MB;
	long long sw0 = vmstat("pswpout"), cur, n2, demoted;
	char *cg;

	if (!three_tiers())
		return TT_SKIP;
	TT_EXPECT(tiers_ok(3), "the memory tiers are not the workbench's");
	cg = tt_cgroup(cg2_root(), "tt_v2_lower1");
	TT_EXPECT(cg, "cannot create the cgroup");
	holders[0] = holder_start(cg, len, 16, false);
	TT_EXPECT(holders[0], "no holder");
	TT_EXPECT(current(cg, K1) >= len - TOL, "premise: only %lld MB on node0 + node1",
		  MBS(current(cg, K1)));
	TT_EXPECT(set_max(cg, K1, "100M") == 0, "cannot lower %s line %d", MAX, K1);
	cur = current(cg, K1);
	n2 = node_bytes(holders[0], 2);
	demoted = cg_read_key(cg, "memory.stat", "pgdemote_tierlimit");
	tt_diag("after the write: line %d %lld MB (line %d %lld MB), node2 %lld MB, "
		"pgdemote_tierlimit %lld", K1, MBS(cur), K0, MBS(current(cg, K0)), MBS(n2),
		demoted);
	TT_EXPECT(cur >= 0 && cur <= max + TOL, "line %d %lld MB after lowering its max to 100 MB",
		  K1, MBS(cur));
	TT_EXPECT(cur >= max - 16 * (long long)MB, "demoted far below max: %lld MB", MBS(cur));
	TT_EXPECT(n2 >= len - max - TOL, "only %lld MB on node2", MBS(n2));
	TT_EXPECT(demoted * page_size >= len - max - TOL, "pgdemote_tierlimit %lld pages", demoted);
	TT_EXPECT(vmstat("pswpout") == sw0, "pages were swapped out");
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
	return TT_PASS;
}

/*
 * A filler: a child that takes the free memory of some nodes, bound to
 * each in turn, in 1 MB steps until only the zones' low watermarks and
 * `spare` bytes are left.  Not further: below the low watermark the
 * zones' lowmem reserves come into play and a bound, mlocked task is
 * soon OOM-killed.  Allocations without direct reclaim, as at max, can
 * still take what is left down to below the min watermark.  With `lock` the memory is mlocked, so that no
 * reclaim on those nodes can give it back.  It holds the memory until
 * killed.
 */
struct filler_arg {
	bool nodes[TT_MAX_NODES];
	bool lock;
	long long spare;
	long long max_bytes;	/* if not 0: take this much, whatever is free */
	int ready;		/* the write end of a pipe */
};

static int filler_main(void *argp)
{
	struct filler_arg *a = argp;
	const size_t step = MB;
	long long taken = 0;

	for (int node = 0; node < TT_MAX_NODES; node++) {
		long long free, low, floor;

		if (!a->nodes[node])
			continue;
		node_free_wmark(node, TT_WMARK_LOW, &free, &low);
		floor = low + a->spare;
		if (low <= 0 || bind_to_node(node))
			return 1;
		/* A bound filler pushes on past the watermarks, into reclaim. */
		while (a->max_bytes ? taken < a->max_bytes :
				      node_free(node) > floor + (long long)step) {
			char *p = map_anon(step);

			if (!p || (a->lock && mlock(p, step)))
				return 2;
			fill_pages(p, step, node);
			taken += step;
		}
	}
	if (write(a->ready, "r", 1) != 1)
		return 3;
	for (;;)
		pause();
}

static pid_t filler_start(struct filler_arg *a)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	a->ready = fds[1];
	pid = spawn_in(NULL, filler_main, a);
	close(fds[1]);
	if (pid > 0 && read(fds[0], &c, 1) != 1) {
		tt_diag("the filler died: status %d", wait_child(pid));
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

static pid_t filler_pid = -1;

static void filler_stop(void)
{
	if (filler_pid > 0) {
		kill(filler_pid, SIGKILL);
		wait_child(filler_pid);
	}
	filler_pid = -1;
}

/*
 * With the lower tiers full there is nowhere to redirect to: allocations
 * at max come from node0 rather than fail or OOM-kill, counted as
 * "fallback".  Once the lower tiers have room again, new allocations at
 * max go there again.
 */
static enum tt_result full_body(void)
{
	const long long len = 128 * MB, more = 32 * MB;
	struct filler_arg fa = { .lock = true, .spare = 8 * MB };
	char *cg = tt_cgroup(cg2_root(), "tt_v2_full");
	long long oom0 = vmstat("oom_kill"), n0, fallback, n1;

	TT_EXPECT(tiers_ok(2), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	for (int n = 1; n < TT_MAX_NODES; n++)
		fa.nodes[n] = node_total(n) > 0;
	filler_pid = filler_start(&fa);
	TT_EXPECT(filler_pid > 0, "cannot fill the lower tiers");
	TT_EXPECT(set_max(cg, K0, "0") == 0, "cannot set %s", MAX);
	holders[0] = holder_start(cg, len, 11, false);
	TT_EXPECT(holders[0], "no holder (was it OOM-killed?)");
	n0 = node_bytes(holders[0], 0);
	fallback = cg_tier_event(cg, K0, "fallback");
	tt_diag("lower tiers full: %lld MB of %lld MB on node0, %lld fallbacks, "
		"node1 free %lld MB", MBS(n0), MBS(len), fallback, MBS(node_free(1)));
	TT_EXPECT(n0 >= len / 2, "only %lld MB on node0: where did it go?", MBS(n0));
	TT_EXPECT(fallback > 0, "no fallback events counted");
	TT_EXPECT(vmstat("oom_kill") == oom0, "something was OOM-killed");
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");

	/* Room again: the redirect works again for new pages. */
	filler_stop();
	holders[1] = holder_start(cg, more, 17, false);
	TT_EXPECT(holders[1], "no second holder");
	n0 = node_bytes(holders[1], 0);
	n1 = node_bytes(holders[1], 1);
	tt_diag("lower tiers free again: a new %lld MB holder has %lld MB on node0, %lld MB on "
		"node1", MBS(more), MBS(n0), MBS(n1));
	TT_EXPECT(n0 >= 0 && n0 <= TOL, "%lld MB of the new holder on node0 at max 0", MBS(n0));
	TT_EXPECT(n1 >= more - TOL, "only %lld MB of the new holder on node1", MBS(n1));
	TT_EXPECT(vmstat("oom_kill") == oom0, "something was OOM-killed");
	return TT_PASS;
}

/*
 * 3tier: a full node1 is skipped for the next tier down, node2, rather
 * than the top tier; and node1's own demotion to node2 still takes the
 * capped cgroup's pages onwards.
 */
static enum tt_result chain_body(void)
{
	const long long len = 256 * MB;
	struct filler_arg fa = { .lock = true, .spare = 8 * MB };
	char *cg;
	long long n0, n2, room1, old_demotion = -1;

	if (!three_tiers())
		return TT_SKIP;
	TT_EXPECT(tiers_ok(3), "the memory tiers are not the workbench's");
	cg = tt_cgroup(cg2_root(), "tt_v2_chain");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(set_max(cg, K0, "0") == 0, "cannot set %s", MAX);

	fa.nodes[1] = true;
	filler_pid = filler_start(&fa);
	TT_EXPECT(filler_pid > 0, "cannot fill node1");
	/* What node1 still has free: allocations without direct reclaim, as
	 * at max, may take it down to below its min watermark. */
	room1 = node_free(1);
	holders[0] = holder_start(cg, len, 12, false);
	TT_EXPECT(holders[0], "no holder");
	n0 = node_bytes(holders[0], 0);
	n2 = node_bytes(holders[0], 2);
	tt_diag("node1 full (%lld MB free): node0 %lld MB, node2 %lld MB, fallbacks %lld",
		MBS(room1), MBS(n0), MBS(n2), cg_tier_event(cg, K0, "fallback"));
	/* Only what node1 had free may have gone there. */
	TT_EXPECT(room1 >= 0 && n2 >= len - room1 - TOL, "only %lld MB on node2, node1 had %lld MB free",
		  MBS(n2), MBS(room1));
	TT_EXPECT(n0 >= 0 && n0 <= TOL, "%lld MB on node0", MBS(n0));
	TT_EXPECT(cg_tier_event(cg, K0, "fallback") == 0,
		  "fell back to the top tier although node2 had room");
	holder_stop(holders[0]);
	holders[0] = NULL;
	filler_stop();

	/* Pages redirected to node1 move on to node2 under node1 pressure. */
	old_demotion = read_ll("/sys/kernel/mm/numa/demotion_enabled");
	TT_EXPECT(write_text("/sys/kernel/mm/numa/demotion_enabled", "1") == 0,
		  "cannot turn demotion on");
	holders[0] = holder_start(cg, len, 13, false);
	TT_EXPECT(holders[0], "no holder");
	TT_EXPECT(node_bytes(holders[0], 1) >= len - TOL, "premise: only %lld MB on node1",
		  MBS(node_bytes(holders[0], 1)));
	/* Unlocked and bounded: what node1 reclaim frees must stay on node2. */
	fa.lock = false;
	fa.max_bytes = node_total(1) - len / 2;
	filler_pid = filler_start(&fa);
	for (double deadline = now_s() + 20; now_s() < deadline; usleep(100 * 1000)) {
		n2 = node_bytes(holders[0], 2);
		if (n2 >= 16 * (long long)MB)
			break;
	}
	n0 = node_bytes(holders[0], 0);
	write_text("/sys/kernel/mm/numa/demotion_enabled", old_demotion ? "1" : "0");
	tt_diag("after node1 pressure: node0 %lld MB, node2 %lld MB", MBS(n0), MBS(n2));
	TT_EXPECT(filler_pid > 0, "the node1 filler failed");
	TT_EXPECT(n2 >= 16 * (long long)MB, "only %lld MB moved on to node2", MBS(n2));
	TT_EXPECT(n0 >= 0 && n0 <= TOL, "%lld MB came back to node0", MBS(n0));
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_parse, parse_body(), cleanup)
TT_WITH_CLEANUP(test_cap, cap_body(), cleanup)
TT_WITH_CLEANUP(test_lower_classic, lower_body(false), cleanup)
TT_WITH_CLEANUP(test_lower_mglru, lower_body(true), cleanup)
TT_WITH_CLEANUP(test_parent, parent_body(), cleanup)
TT_WITH_CLEANUP(test_tier1_cap, tier1_cap_body(), cleanup)
TT_WITH_CLEANUP(test_both_caps, both_caps_body(), cleanup)
TT_WITH_CLEANUP(test_lower_tier1, lower_tier1_body(), cleanup)
TT_WITH_CLEANUP(test_full, full_body(), cleanup)
TT_WITH_CLEANUP(test_chain, chain_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "values_parse_like_memory_max", test_parse },
		{ "cap_redirects_allocations_to_node1", test_cap },
		{ "lowering_max_demotes_classic_lru", test_lower_classic },
		{ "lowering_max_demotes_mglru", test_lower_mglru },
		{ "parent_max_caps_children", test_parent },
		{ "node1_tier_cap_bounds_node0_and_node1", test_tier1_cap },
		{ "two_caps_hold_at_their_own_boundaries", test_both_caps },
		{ "lowering_node1_tier_max_demotes_to_node2", test_lower_tier1 },
		{ "full_lower_tiers_fall_back", test_full },
		{ "full_node1_redirects_to_node2", test_chain },
	};

	ntiers = tiers_read(tiers, TT_MAX_TIERS);
	if (ntiers < 0)
		ntiers = 0;
	return tt_run(cases, ARRAY_SIZE(cases));
}

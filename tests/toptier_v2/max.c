// SPDX-License-Identifier: GPL-2.0
/*
 * memory.toptier.max (cgroup v2): a hard cap on a cgroup's top-tier pages.
 * At the cap, new user pages come from the lower tier; lowering the cap
 * demotes the excess at once, without swapping; a parent's cap covers its
 * children; memory.toptier.events and memory.stat count what happened.
 * Values parse like memory.max, and bad ones are refused with EINVAL.
 *
 * The bound: memory.toptier.current may exceed max by the allocations in
 * flight between the check and the charge, one folio per allocating task
 * (Documentation/admin-guide/cgroup-v2.rst).  TOL below is far above that
 * and covers the few pages a cgroup has besides the test's.
 *
 * toptier-test: topology=2tier,3tier timeout=600
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

#define MAX		"memory.toptier.max"
#define CURRENT		"memory.toptier.current"
#define EVENTS		"memory.toptier.events"
#define TOL		(4LL * (long long)MB)

static struct holder *holders[2];
static char *cgroups[6];
static int ncgroups;

static char *mkcg(const char *parent, const char *name)
{
	char *cg = cg_create(parent, name);

	if (cg && ncgroups < (int)ARRAY_SIZE(cgroups))
		cgroups[ncgroups++] = cg;
	return cg;
}

static void filler_stop(void);

static void cleanup(void)
{
	filler_stop();
	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	while (ncgroups > 0) {
		char *cg = cgroups[--ncgroups];

		cg_destroy(cg);
		free(cg);
	}
	tt_restore_mglru();
}

static long long node_bytes(struct holder *h, int node)
{
	long counts[TT_MAX_NODES];

	return holder_count(h, counts) ? -1 : (long long)counts[node] * page_size;
}

/*
 * A sampler: a child that reads a cgroup's memory.toptier.current every
 * 10 ms and keeps the largest value in shared memory until it is stopped.
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

static bool sampler_start(struct sampler *s, const char *cg)
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
			long long v = cg_read_ll(cg, CURRENT);

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
	char path[512], buf[64];
	char *cg;

	TT_EXPECT(root, "no cgroup2 hierarchy with the memory controller");
	snprintf(path, sizeof(path), "%s/%s", root, MAX);
	TT_EXPECT(!path_exists(path), "%s exists on the root cgroup", MAX);
	cg = mkcg(root, "tt_v2_parse");
	TT_EXPECT(cg, "cannot create the cgroup");
	snprintf(path, sizeof(path), "%s/%s", cg, MAX);
	TT_EXPECT(read_text(path, buf, sizeof(buf)) > 0 && !strcmp(buf, "max\n"),
		  "default %s is \"%s\", want max", MAX, buf);
	TT_EXPECT(cg_read_key(cg, EVENTS, "max") == 0, "a new cgroup's max events: %lld",
		  cg_read_key(cg, EVENTS, "max"));

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		int err = cg_write(cg, MAX, good[i].in);

		TT_EXPECT(err == 0, "writing \"%s\": %s", good[i].in, strerror(-err));
		TT_EXPECT(read_text(path, buf, sizeof(buf)) > 0, "cannot read %s", MAX);
		if (good[i].want < 0)
			TT_EXPECT(!strcmp(buf, "max\n"), "\"%s\" reads back as %s", good[i].in, buf);
		else
			TT_EXPECT(strtoll(buf, NULL, 10) == good[i].want,
				  "\"%s\" reads back as %s, want %lld", good[i].in, buf,
				  good[i].want);
	}
	TT_EXPECT(cg_write(cg, MAX, "300M") == 0, "writing 300M failed");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err = cg_write(cg, MAX, bad[i]);

		TT_EXPECT(err == -EINVAL, "writing \"%s\" gave %s, want EINVAL", bad[i],
			  err ? strerror(-err) : "success");
		TT_EXPECT(cg_read_ll(cg, MAX) == 300LL << 20, "after \"%s\" the limit is %lld",
			  bad[i], cg_read_ll(cg, MAX));
	}
	return TT_PASS;
}

/* The cap holds at every 10 ms sample while an 800 MB writer runs. */
static enum tt_result cap_body(void)
{
	const long long len = 800 * MB, max = 256 * MB;
	char *cg = mkcg(cg2_root(), "tt_v2_cap");
	long long oom0 = vmstat("oom_kill"), sw0 = vmstat("pswpout"), peak, n0, n1, ev;
	struct sampler s;

	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(cg_write(cg, MAX, "256M") == 0, "cannot set %s", MAX);
	TT_EXPECT(sampler_start(&s, cg), "cannot start the sampler");
	holders[0] = holder_start(cg, len, 7, false);
	peak = sampler_stop_read(&s);
	TT_EXPECT(holders[0], "no holder (was it OOM-killed?)");
	n0 = node_bytes(holders[0], 0);
	n1 = node_bytes(holders[0], 1);
	ev = cg_read_key(cg, EVENTS, "max");
	tt_diag("sampled peak of %s %lld MB (max 256 MB); node0 %lld MB, node1 %lld MB; "
		"max events %lld", CURRENT, peak / (long long)MB, n0 / (long long)MB,
		n1 / (long long)MB, ev);
	TT_EXPECT(peak >= max - TOL, "premise: the cgroup never reached its cap (%lld MB)",
		  peak / (long long)MB);
	TT_EXPECT(peak <= max + TOL, "%s reached %lld MB, over max 256 MB", CURRENT,
		  peak / (long long)MB);
	TT_EXPECT(n0 >= 0 && n0 <= max + TOL, "%lld MB on node0", n0 / (long long)MB);
	TT_EXPECT(n1 >= len - max - TOL, "only %lld MB on node1", n1 / (long long)MB);
	TT_EXPECT(ev > 0, "no max events counted");
	TT_EXPECT(cg_read_key(cg, "memory.stat", "toptier_max_fallback") == 0,
		  "allocations fell back to the top tier although node1 had room");
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

	TT_EXPECT(tt_set_mglru(mglru) == 0, "cannot turn MGLRU %s", mglru ? "on" : "off");
	snprintf(name, sizeof(name), "tt_v2_lower_%s", mglru ? "mglru" : "classic");
	cg = mkcg(cg2_root(), name);
	TT_EXPECT(cg, "cannot create the cgroup");
	holders[0] = holder_start(cg, len, 8, false);
	TT_EXPECT(holders[0], "no holder");
	TT_EXPECT(cg_read_ll(cg, CURRENT) >= len - TOL, "premise: only %lld MB on the top tier",
		  cg_read_ll(cg, CURRENT) / (long long)MB);
	TT_EXPECT(cg_write(cg, MAX, "100M") == 0, "cannot lower %s", MAX);
	cur = cg_read_ll(cg, CURRENT);
	n1 = node_bytes(holders[0], 1);
	demoted = cg_read_key(cg, "memory.stat", "pgdemote_toptier");
	tt_diag("after the write: current %lld MB, node1 %lld MB, pgdemote_toptier %lld",
		cur / (long long)MB, n1 / (long long)MB, demoted);
	TT_EXPECT(cur >= 0 && cur <= max + TOL, "current %lld MB after lowering max to 100 MB",
		  cur / (long long)MB);
	TT_EXPECT(cur >= max - 16 * (long long)MB, "demoted far below max: %lld MB",
		  cur / (long long)MB);
	TT_EXPECT(n1 >= len - max - TOL, "only %lld MB on node1", n1 / (long long)MB);
	TT_EXPECT(demoted * page_size >= len - max - TOL, "pgdemote_toptier %lld pages", demoted);
	TT_EXPECT(vmstat("pswpout") == sw0, "pages were swapped out");
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
	return TT_PASS;
}

/* A parent's max caps the sum of its children. */
static enum tt_result parent_body(void)
{
	const long long len = 300 * MB, max = 256 * MB;
	char *p = mkcg(cg2_root(), "tt_v2_pmax");
	char *c1, *c2;
	long long peak, total;
	struct sampler s;

	TT_EXPECT(p && cg_write(p, "cgroup.subtree_control", "+memory") == 0,
		  "cannot create the parent");
	c1 = mkcg(p, "c1");
	c2 = mkcg(p, "c2");
	TT_EXPECT(c1 && c2, "cannot create the children");
	TT_EXPECT(cg_write(p, MAX, "256M") == 0, "cannot set the parent's %s", MAX);
	TT_EXPECT(sampler_start(&s, p), "cannot start the sampler");
	holders[0] = holder_start(c1, len, 9, false);
	holders[1] = holder_start(c2, len, 10, false);
	peak = sampler_stop_read(&s);
	TT_EXPECT(holders[0] && holders[1], "no holders");
	total = node_bytes(holders[0], 0) + node_bytes(holders[1], 0);
	tt_diag("parent: sampled peak %lld MB, children on node0 %lld MB in all; "
		"max events c1 %lld, parent %lld", peak / (long long)MB, total / (long long)MB,
		cg_read_key(c1, EVENTS, "max"), cg_read_key(p, EVENTS, "max"));
	TT_EXPECT(peak <= max + TOL, "the parent reached %lld MB", peak / (long long)MB);
	TT_EXPECT(total <= max + TOL, "the children hold %lld MB on node0", total / (long long)MB);
	TT_EXPECT(cg_read_key(p, EVENTS, "max") > 0, "the parent counted no max events");
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

static long long node_low_bytes(int node)
{
	struct tt_zone z[TT_MAX_ZONES];
	int n = zoneinfo_read(z, TT_MAX_ZONES);
	long long sum = 0;

	for (int i = 0; i < n; i++)
		if (z[i].node == node && z[i].managed > 0)
			sum += z[i].low * page_size;
	return n < 0 ? -1 : sum;
}

static int filler_main(void *argp)
{
	struct filler_arg *a = argp;
	const size_t step = MB;
	long long taken = 0;

	for (int node = 0; node < TT_MAX_NODES; node++) {
		long long floor;

		if (!a->nodes[node])
			continue;
		floor = node_low_bytes(node) + a->spare;
		if (floor < a->spare || bind_to_node(node))
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
 * at max come from the top tier rather than fail (counted), enforcement
 * stalls (counted) instead of swapping, and once the lower tiers have
 * room again it demotes the excess by itself, with no new charge.
 */
static enum tt_result full_body(void)
{
	const long long len = 128 * MB;
	struct filler_arg fa = { .lock = true, .spare = 8 * MB };
	char *cg = mkcg(cg2_root(), "tt_v2_full");
	long long oom0 = vmstat("oom_kill"), n0, fallback, stalled = 0, cur = -1;
	double deadline;

	TT_EXPECT(cg, "cannot create the cgroup");
	for (int n = 1; n < TT_MAX_NODES; n++)
		fa.nodes[n] = node_total(n) > 0;
	filler_pid = filler_start(&fa);
	TT_EXPECT(filler_pid > 0, "cannot fill the lower tiers");
	TT_EXPECT(cg_write(cg, MAX, "0") == 0, "cannot set %s", MAX);
	holders[0] = holder_start(cg, len, 11, false);
	TT_EXPECT(holders[0], "no holder (was it OOM-killed?)");
	n0 = node_bytes(holders[0], 0);
	fallback = cg_read_key(cg, "memory.stat", "toptier_max_fallback");
	tt_diag("lower tiers full: %lld MB of %lld MB on node0, %lld fallbacks, "
		"node1 free %lld MB", n0 / (long long)MB, len / (long long)MB, fallback,
		node_free(1) / (long long)MB);
	TT_EXPECT(n0 >= len / 2, "only %lld MB on node0: where did it go?", n0 / (long long)MB);
	TT_EXPECT(fallback > 0, "no toptier_max_fallback counted");
	TT_EXPECT(vmstat("oom_kill") == oom0, "something was OOM-killed");

	for (deadline = now_s() + 10; now_s() < deadline && stalled <= 0; usleep(50 * 1000))
		stalled = cg_read_key(cg, "memory.stat", "toptier_demote_stalled");
	TT_EXPECT(stalled > 0, "no toptier_demote_stalled within 10 s");
	TT_EXPECT(cg_read_ll(cg, CURRENT) >= len / 2, "current %lld MB: pages left node0 "
		  "although the lower tiers are full", cg_read_ll(cg, CURRENT) / (long long)MB);

	/* Room again: the stalled work retries without any new charge. */
	filler_stop();
	for (deadline = now_s() + 45; now_s() < deadline; usleep(100 * 1000)) {
		cur = cg_read_ll(cg, CURRENT);
		if (cur >= 0 && cur <= TOL)
			break;
	}
	tt_diag("after the lower tiers were freed: current %lld MB after %lld stalls",
		cur / (long long)MB, cg_read_key(cg, "memory.stat", "toptier_demote_stalled"));
	TT_EXPECT(cur >= 0 && cur <= TOL, "current still %lld MB 45 s after the lower "
		  "tiers had room", cur / (long long)MB);
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
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

	if (strcmp(topology(), "3tier")) {
		tt_skip_reason("needs two lower tiers (3tier)");
		return TT_SKIP;
	}
	cg = mkcg(cg2_root(), "tt_v2_chain");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(cg_write(cg, MAX, "0") == 0, "cannot set %s", MAX);

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
		room1 / (long long)MB, n0 / (long long)MB, n2 / (long long)MB,
		cg_read_key(cg, "memory.stat", "toptier_max_fallback"));
	/* Only what node1 had free may have gone there. */
	TT_EXPECT(room1 >= 0 && n2 >= len - room1 - TOL, "only %lld MB on node2, node1 had %lld MB free",
		  n2 / (long long)MB, room1 / (long long)MB);
	TT_EXPECT(n0 >= 0 && n0 <= TOL, "%lld MB on node0", n0 / (long long)MB);
	TT_EXPECT(cg_read_key(cg, "memory.stat", "toptier_max_fallback") == 0,
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
		  node_bytes(holders[0], 1) / (long long)MB);
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
	tt_diag("after node1 pressure: node0 %lld MB, node2 %lld MB", n0 / (long long)MB,
		n2 / (long long)MB);
	TT_EXPECT(filler_pid > 0, "the node1 filler failed");
	TT_EXPECT(n2 >= 16 * (long long)MB, "only %lld MB moved on to node2", n2 / (long long)MB);
	TT_EXPECT(n0 >= 0 && n0 <= TOL, "%lld MB came back to node0", n0 / (long long)MB);
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_parse, parse_body(), cleanup)
TT_WITH_CLEANUP(test_cap, cap_body(), cleanup)
TT_WITH_CLEANUP(test_lower_classic, lower_body(false), cleanup)
TT_WITH_CLEANUP(test_lower_mglru, lower_body(true), cleanup)
TT_WITH_CLEANUP(test_parent, parent_body(), cleanup)
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
		{ "full_lower_tiers_fall_back_then_demote", test_full },
		{ "full_node1_redirects_to_node2", test_chain },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Two sockets: on 2socket the DRAM nodes 0 and 1 make one tier, so the
 * tier files have one line, and its max caps both nodes together.  Each
 * socket's pages go to that socket's expander (node2 near node0, node3
 * near node1), never the far one:
 *  - A, on CPU0, and B, on CPU1, hold 48 MB each on their own DRAM node;
 *    lowering the line's max to 64M demotes 32 MB before the write
 *    returns, A's pages only to node2 and B's only to node3;
 *  - at the max, C on CPU1 and D on CPU0 allocate 24 MB each: C's pages
 *    come from node3 and D's from node2, the expander nearest the
 *    allocating CPU, and the line stays at its max.
 *
 * The background work keeps to the sockets too:
 *  - with memory.tiers.high 64M set first, A (CPU0) and B (CPU1) write
 *    48 MB each; their own tasks bring the line back to high, A's pages
 *    going only to node2 and B's only to node3;
 *  - at max 64M, with A's cold 64 MB filling the budget from CPU0, a
 *    region on node3 that a task on CPU1 keeps hot (numa_balancing=2) is
 *    promoted to node1 by exchange: the cold pages it displaces leave
 *    node0 for node2, never for node3, and the line holds its max.
 *
 * toptier-test: topology=2socket timeout=300 debug=yes alone=yes
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tt.h"

#define CURRENT		"memory.tiers.current"
#define MAX		"memory.tiers.max"
#define HIGH		"memory.tiers.high"
#define NUMA_BALANCING	"/proc/sys/kernel/numa_balancing"
#define HELD		(48 * (long long)MB)
#define MORE		(24 * (long long)MB)
#define TOL		(4 * (long long)MB)
#define CAP		(64 * (long long)MB)
#define HOT_LEN		(16 * (long long)MB)
#define HOT_S		120	/* the debug kernel took 52 s for 80% */
#define SETTLE_S	30
/* The overshoot bound of max is one folio per allocating task. */
#define SLACK		(1 * (long long)MB)
#define MBS(x)		((x) / (long long)MB)

static struct holder *held[4];
static char *cg;
static char balancing_saved[16];

static void cleanup(void)
{
	for (int i = 0; i < 4; i++) {
		holder_stop(held[i]);
		held[i] = NULL;
	}
	cg_destroy_free(&cg);
	if (balancing_saved[0])
		write_text(NUMA_BALANCING, balancing_saved);
	balancing_saved[0] = 0;
}

static int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (cpu >= 0) {
		CPU_SET(cpu, &set);
	} else {
		for (int i = 0; i < sysconf(_SC_NPROCESSORS_ONLN); i++)
			CPU_SET(i, &set);
	}
	return sched_setaffinity(0, sizeof(set), &set);
}

/* A holder in cg whose task (and first touch) runs on one CPU only. */
static struct holder *hold_from_cpu(int cpu, long long len, uint64_t seed)
{
	struct holder *h;

	if (pin_to_cpu(cpu))
		return NULL;
	h = holder_start(cg, len, seed, false);
	pin_to_cpu(-1);
	return h;
}

static long long on_node(struct holder *h, int node)
{
	long counts[TT_MAX_NODES];

	return holder_count(h, counts) ? -1 : counts[node] * page_size;
}

static void show(const char *step)
{
	static const char *const names[] = { "A", "B", "C", "D" };

	for (int i = 0; i < 4; i++) {
		if (!held[i])
			continue;
		tt_diag("%s: %s on node0..3: %lld %lld %lld %lld MB", step, names[i],
			MBS(on_node(held[i], 0)), MBS(on_node(held[i], 1)),
			MBS(on_node(held[i], 2)), MBS(on_node(held[i], 3)));
	}
}

/* The DRAM tier's key on 2socket (both DRAM nodes, above both expanders). */
static enum tt_result two_sockets(int *key)
{
	int k = tier_of_node(0);

	TT_EXPECT(!strcmp(topology(), "2socket"), "needs the 2socket topology, not %s",
		  topology());
	TT_EXPECT(k >= 0 && tier_of_node(1) == k && tier_of_node(2) > k &&
		  tier_of_node(3) == tier_of_node(2),
		  "premise: tiers of nodes 0..3 are %d %d %d %d", k, tier_of_node(1),
		  tier_of_node(2), tier_of_node(3));
	*key = k;
	return TT_PASS;
}

static enum tt_result socket_body(void)
{
	int keys[TT_MAX_TIERS], k, n;
	long long vals[TT_MAX_TIERS], line;
	char path[512];

	if (two_sockets(&k) != TT_PASS)
		return TT_FAIL;
	cg = cg_create(cg2_root(), "tt_v2_socket");
	TT_EXPECT(cg, "cannot create the cgroup");
	snprintf(path, sizeof(path), "%s/%s", cg, MAX);
	n = keyed_read(path, keys, vals, TT_MAX_TIERS);
	TT_EXPECT(n == 1 && keys[0] == k, "%s has %d lines, want the one of tier %d", MAX, n, k);

	held[0] = hold_from_cpu(0, HELD, 1);
	held[1] = hold_from_cpu(1, HELD, 2);
	TT_EXPECT(held[0] && held[1], "no holders");
	show("placed");
	TT_EXPECT(on_node(held[0], 0) >= HELD - TOL && on_node(held[1], 1) >= HELD - TOL,
		  "premise: A and B are not on their own DRAM nodes");
	TT_EXPECT(cg_tier_current_matches(cg, k, 2 * HELD, TOL, "placed"),
		  "the DRAM line is not both nodes' %lld MB", MBS(2 * HELD));

	/* Lowering: each DRAM node's pages to its own expander. */
	TT_EXPECT(cg_tier_write(cg, MAX, k, "64M") == 0, "cannot lower the max");
	show("max 64M");
	TT_EXPECT(cg_tier_current_matches(cg, k, CAP, TOL, "max 64M"),
		  "the DRAM line is not at its max after the write");
	TT_EXPECT(on_node(held[0], 2) + on_node(held[1], 3) >= 2 * HELD - CAP - TOL,
		  "the excess did not go to the expanders");
	TT_EXPECT(on_node(held[0], 3) == 0, "A's pages went to node3, the far expander");
	TT_EXPECT(on_node(held[1], 2) == 0, "B's pages went to node2, the far expander");

	/* At the max: the expander nearest the allocating CPU. */
	held[2] = hold_from_cpu(1, MORE, 3);
	held[3] = hold_from_cpu(0, MORE, 4);
	TT_EXPECT(held[2] && held[3], "no holders at the max");
	show("at the max");
	TT_EXPECT(on_node(held[2], 3) >= MORE - TOL && on_node(held[2], 2) == 0,
		  "C, on CPU1, got %lld MB on node3 and %lld MB on node2",
		  MBS(on_node(held[2], 3)), MBS(on_node(held[2], 2)));
	TT_EXPECT(on_node(held[3], 2) >= MORE - TOL && on_node(held[3], 3) == 0,
		  "D, on CPU0, got %lld MB on node2 and %lld MB on node3",
		  MBS(on_node(held[3], 2)), MBS(on_node(held[3], 3)));
	line = cg_tier_read(cg, CURRENT, k);
	TT_EXPECT(line <= CAP + TOL, "the DRAM line went to %lld MB", MBS(line));
	TT_EXPECT(cg_tier_current_matches(cg, k, CAP, TOL, "at the max"),
		  "the DRAM line does not match memory.numa_stat");
	for (int i = 0; i < 4; i++)
		TT_EXPECT(holder_check(held[i]) == 0, "holder %d's contents changed", i);
	return TT_PASS;
}

/*
 * memory.tiers.high set before the memory comes: the demotion is the
 * allocating tasks' own, on their way back to user space.
 */
static enum tt_result high_body(void)
{
	long long line, gone;
	int k;

	if (two_sockets(&k) != TT_PASS)
		return TT_FAIL;
	cg = cg_create(cg2_root(), "tt_v2_socket_high");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(cg_tier_write(cg, HIGH, k, "64M") == 0, "cannot set %s", HIGH);
	held[0] = hold_from_cpu(0, HELD, 5);
	held[1] = hold_from_cpu(1, HELD, 6);
	TT_EXPECT(held[0] && held[1], "no holders");
	line = cg_tier_line_at_most(cg, k, CAP + TOL, SETTLE_S);
	show("high 64M");
	gone = on_node(held[0], 2) + on_node(held[1], 3);
	tt_diag("line %lld MB; high events %lld, pgdemote_tierlimit %lld", MBS(line),
		cg_tier_event(cg, k, "high"), cg_read_key(cg, "memory.stat", "pgdemote_tierlimit"));
	TT_EXPECT(line <= CAP + TOL, "the DRAM line stayed at %lld MB for %d s, high 64M",
		  MBS(line), SETTLE_S);
	TT_EXPECT(gone >= 2 * HELD - CAP - TOL, "only %lld MB reached the expanders", MBS(gone));
	TT_EXPECT(on_node(held[0], 3) == 0, "A's pages went to node3, the far expander");
	TT_EXPECT(on_node(held[1], 2) == 0, "B's pages went to node2, the far expander");
	TT_EXPECT(cg_tier_event(cg, k, "high") > 0, "no high events");
	TT_EXPECT(cg_tier_line_agrees(cg, k, TOL, 0, 5, "high 64M"),
		  "the DRAM line does not match memory.numa_stat");
	for (int i = 0; i < 2; i++)
		TT_EXPECT(holder_check(held[i]) == 0, "holder %d's contents changed", i);
	return TT_PASS;
}

/* What the hot task saw, in shared memory. */
struct hot_result {
	long npages, on_node1, on_node0, on_node3_start;
	long long line_max;	/* largest memory.tiers.current line sampled */
	long bad_pages;
	double secs;
};

struct hot_job {
	int key;
	struct hot_result *res;
};

/* On CPU1: a region placed on node3, kept hot until 80% is on node1. */
static int hot_child(void *arg)
{
	const struct hot_job *job = arg;
	struct hot_result *r = job->res;
	char *hot = map_anon(HOT_LEN);
	long counts[TT_MAX_NODES];
	double start, next = 0;
	long long line;

	if (!hot || pin_to_cpu(1))
		return 1;
	if (place_on_node(hot, HOT_LEN, 3))
		return 2;
	fill_pages(hot, HOT_LEN, 8);
	if (reset_policy(hot, HOT_LEN) || pages_per_node(hot, HOT_LEN, counts))
		return 3;
	r->npages = HOT_LEN / page_size;
	r->on_node3_start = counts[3];
	start = now_s();
	while (now_s() < start + HOT_S) {
		touch_pages(hot, HOT_LEN);
		if (now_s() < next)
			continue;
		line = cg_tier_read(cg, CURRENT, job->key);
		if (line > r->line_max)
			r->line_max = line;
		if (pages_per_node(hot, HOT_LEN, counts))
			return 4;
		r->on_node1 = counts[1];
		if (r->on_node1 >= r->npages * 8 / 10)
			break;
		next = now_s() + 0.5;
	}
	r->secs = now_s() - start;
	if (pages_per_node(hot, HOT_LEN, counts))
		return 4;
	r->on_node1 = counts[1];
	r->on_node0 = counts[0];
	r->bad_pages = check_pages(hot, HOT_LEN, 8);
	return 0;
}

/* Shared with the hot task; mapped once, so that a failed case leaks nothing. */
static struct hot_result *hot_result;

static enum tt_result exchange_body(void)
{
	struct hot_result *r = hot_result;
	struct hot_job job = { .res = r };
	long long a_near, exchanged;
	int k, rc;

	memset(r, 0, sizeof(*r));
	if (two_sockets(&k) != TT_PASS)
		return TT_FAIL;
	TT_EXPECT(read_text(NUMA_BALANCING, balancing_saved, sizeof(balancing_saved)) > 0,
		  "cannot read %s", NUMA_BALANCING);
	cg = cg_create(cg2_root(), "tt_v2_socket_exchange");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(cg_tier_write(cg, MAX, k, "64M") == 0, "cannot set %s", MAX);
	held[0] = hold_from_cpu(0, CAP, 7);
	TT_EXPECT(held[0], "no holder");
	TT_EXPECT(on_node(held[0], 0) >= CAP - TOL, "premise: A has only %lld MB on node0",
		  MBS(on_node(held[0], 0)));
	a_near = on_node(held[0], 2);
	TT_EXPECT(write_text(NUMA_BALANCING, "2") == 0, "cannot set numa_balancing=2");
	job.key = k;
	rc = wait_child(spawn_in(cg, hot_child, &job));
	show("exchange");
	exchanged = cg_read_key(cg, "memory.stat", "pgpromote_tierlimit_exchange");
	tt_diag("hot region: %ld/%ld pages on node1 after %.1f s (%ld on node3 at the start, "
		"%ld on node0 at the end); line at most %lld KB; exchanged %lld", r->on_node1,
		r->npages, r->secs, r->on_node3_start, r->on_node0, r->line_max >> 10, exchanged);
	TT_EXPECT(rc == 0, "the hot task failed (%d)", rc);
	TT_EXPECT(r->on_node3_start >= r->npages * 99 / 100,
		  "premise: only %ld hot pages started on node3", r->on_node3_start);
	TT_EXPECT(r->on_node1 >= r->npages * 8 / 10,
		  "only %ld/%ld hot pages reached node1 in %d s", r->on_node1, r->npages, HOT_S);
	TT_EXPECT(exchanged > 0, "pgpromote_tierlimit_exchange did not grow");
	TT_EXPECT(on_node(held[0], 2) - a_near >= r->on_node1 * page_size - TOL,
		  "A's pages on node2 grew by %lld MB, %ld hot pages came in",
		  MBS(on_node(held[0], 2) - a_near), r->on_node1);
	TT_EXPECT(on_node(held[0], 3) == 0, "A's cold pages went to node3, the far expander");
	TT_EXPECT(r->line_max <= CAP + SLACK, "the DRAM line reached %lld KB over max 64M",
		  r->line_max >> 10);
	TT_EXPECT(r->bad_pages == 0 && holder_check(held[0]) == 0, "contents changed");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_socket, socket_body(), cleanup)
TT_WITH_CLEANUP(test_high, high_body(), cleanup)
TT_WITH_CLEANUP(test_exchange, exchange_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "each_socket_uses_its_own_expander", test_socket },
		{ "high_demotes_each_socket_to_its_own_expander", test_high },
		{ "exchange_demotes_to_the_cold_pages_own_expander", test_exchange },
	};

	hot_result = mmap(NULL, sizeof(*hot_result), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (hot_result == MAP_FAILED) {
		perror("mmap");
		return 1;
	}

	return tt_run(cases, ARRAY_SIZE(cases));
}

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
 * toptier-test: topology=2socket timeout=300 debug=yes
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#define CURRENT		"memory.tiers.current"
#define MAX		"memory.tiers.max"
#define HELD		(48 * (long long)MB)
#define MORE		(24 * (long long)MB)
#define TOL		(4 * (long long)MB)
#define CAP		(64 * (long long)MB)
#define MBS(x)		((x) / (long long)MB)

static struct holder *held[4];
static char *cg;

static void cleanup(void)
{
	for (int i = 0; i < 4; i++) {
		holder_stop(held[i]);
		held[i] = NULL;
	}
	cg_destroy_free(&cg);
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

static enum tt_result socket_body(void)
{
	int keys[TT_MAX_TIERS], k = tier_of_node(0), n;
	long long vals[TT_MAX_TIERS], line;
	char path[512];

	TT_EXPECT(!strcmp(topology(), "2socket"), "needs the 2socket topology, not %s",
		  topology());
	TT_EXPECT(k >= 0 && tier_of_node(1) == k && tier_of_node(2) > k &&
		  tier_of_node(3) == tier_of_node(2),
		  "premise: tiers of nodes 0..3 are %d %d %d %d", k, tier_of_node(1),
		  tier_of_node(2), tier_of_node(3));
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

TT_WITH_CLEANUP(test_socket, socket_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "each_socket_uses_its_own_expander", test_socket },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

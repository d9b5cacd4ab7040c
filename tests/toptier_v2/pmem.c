// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tiers.* while persistent memory joins and leaves as system RAM.
 *
 * On the pmem topology node1 is an emulated NVDIMM with no memory at boot.
 * Its namespace becomes a device-dax that dax/kmem hands to the page
 * allocator (tests/lib pmem_to_kmem()): node1 is then system RAM in a tier
 * below node0's.  Later its blocks go offline one at a time while a
 * cgroup keeps allocating (their pages migrate to node0), and kmem gives
 * the memory back: node1 leaves N_MEMORY and the tiers.
 *
 * At every step node0's line of memory.tiers.current must equal what
 * memory.numa_stat says the cgroup has on node0, and while node1 has any
 * memory left, node0's line must come back under its memory.tiers.max.
 * When the PMEM comes back, what the cgroup holds by then is counted
 * again, and freeing it all takes the line to zero: no drift.
 *
 * toptier-test: topology=pmem timeout=300 debug=yes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt.h"

#define CURRENT		"memory.tiers.current"
#define MAX_FILE	"memory.tiers.max"
#define LIMIT		(64LL * (long long)MB)
#define TOL		(4LL * (long long)MB)
#define MBS(x)		((x) / (long long)MB)

static char *cg;
static struct holder *holders[2];
static pid_t churner;

static void cleanup(void)
{
	child_stop(&churner, true);
	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	cg_destroy_free(&cg);
	pmem_leave();
}

/* node0's line against memory.numa_stat, the churner held still. */
static bool line_exact(int key, const char *step)
{
	return cg_tier_line_agrees(cg, key, TOL, churner, 5, step);
}

static enum tt_result joins_and_leaves_body(void)
{
	const char *why;
	int n;

	TT_EXPECT(tiers_wait(1, 5), "premise: more than one tier at boot");
	TT_EXPECT(node_blocks_set(1, "offline", &n) == 0 && n == 0,
		  "premise: node1 has %d memory blocks at boot", n);
	why = pmem_join();
	TT_EXPECT(!why, "%s", why);
	tt_diag("node1: %d blocks online, %lld MB; tiers %d and %d", node_online_blocks(1),
		MBS(node_total(1)), tier_of_node(0), tier_of_node(1));
	TT_EXPECT(node_blocks_set(1, "offline", &n) == 0, "node1's blocks would not go offline");
	TT_EXPECT(pmem_from_kmem() == 0, "kmem would not give the device back");
	TT_EXPECT(tiers_wait(1, 10), "node1 still holds memory");
	TT_EXPECT(node_blocks_set(1, "offline", &n) == 0 && n == 0,
		  "node1 still has %d memory blocks after kmem let go", n);
	return TT_PASS;
}
TT_WITH_CLEANUP(test_joins_and_leaves, joins_and_leaves_body(), cleanup)

static enum tt_result under_load_body(void)
{
	int key0 = tier_of_node(0), n, step = 0;
	long long line, over = 0;
	const char *why;
	char label[64];

	TT_EXPECT(tiers_wait(1, 5), "premise: more than one tier");
	cg = cg_create(cg2_root(), "tt_v2_pmem");
	TT_EXPECT(cg, "cannot create the cgroup");
	holders[0] = holder_start(cg, 48 * MB, 1, false);
	TT_EXPECT(holders[0], "no holder");

	why = pmem_join();
	TT_EXPECT(!why, "%s", why);
	TT_EXPECT(line_exact(key0, "PMEM joined, 48 MB charged before"),
		  "node0's line misses pages charged before the PMEM came");
	TT_EXPECT(cg_tier_write(cg, MAX_FILE, key0, "64M") == 0, "cannot set node0's max");

	holders[1] = holder_start(cg, 64 * MB, 2, false);
	churner = spawn_in(cg, churn_anon, NULL);
	TT_EXPECT(holders[1] && churner > 0, "no load");
	line = cg_tier_line_at_most(cg, key0, LIMIT + TOL, 20);
	TT_EXPECT(line <= LIMIT + TOL, "node0's line stays at %lld MB over a 64 MB max",
		  MBS(line));
	TT_EXPECT(line_exact(key0, "under load, two tiers"), "node0's line is off under load");

	/* node1 goes one block at a time, the churner running. */
	while (node_online_blocks(1) > 0) {
		int err = node_blocks_set_some(1, "offline", 1, &n);

		TT_EXPECT(err == 0, "offlining a block of node1: %s", strerror(-err));
		snprintf(label, sizeof(label), "%d of node1's blocks left", node_online_blocks(1));
		step++;
		if (node_online_blocks(1) > 0) {
			TT_EXPECT(line_exact(key0, label), "node0's line is off with %s", label);
			line = cg_tier_line_at_most(cg, key0, LIMIT + TOL, 20);
			if (line > over)
				over = line;
			TT_EXPECT(line <= LIMIT + TOL,
				  "node0's line stays at %lld MB over its max with %s",
				  MBS(line), label);
		}
	}
	tt_diag("%d blocks went offline under load; node0's line at most %lld MB", step,
		MBS(over));
	TT_EXPECT(tiers_wait(1, 10), "node1 still holds memory after offlining");
	TT_EXPECT(pmem_from_kmem() == 0, "kmem would not give the device back");
	TT_EXPECT(waitpid(churner, NULL, WNOHANG) == 0, "the churner died while node1 went away");

	/* Back again: everything held by now is on node0 and counted. */
	why = pmem_join();
	TT_EXPECT(!why, "PMEM back: %s", why);
	TT_EXPECT(line_exact(key0, "PMEM back"), "node0's line is off after the PMEM came back");
	TT_EXPECT(cg_tier_read(cg, MAX_FILE, key0) == LIMIT,
		  "node0's max reads %lld, not 64M, after the PMEM came back",
		  cg_tier_read(cg, MAX_FILE, key0));
	line = cg_tier_line_at_most(cg, key0, LIMIT + TOL, 20);
	TT_EXPECT(line <= LIMIT + TOL, "node0's line stays at %lld MB over its max with the PMEM back",
		  MBS(line));
	TT_EXPECT(line_exact(key0, "PMEM back, max enforced"), "node0's line is off");
	TT_EXPECT(holder_check(holders[0]) == 0 && holder_check(holders[1]) == 0,
		  "contents changed");

	child_stop(&churner, true);
	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	line = cg_tier_read(cg, CURRENT, key0);
	tt_diag("all freed: line %d %lld kB", key0, line / 1024);
	TT_EXPECT(line >= 0 && line <= TOL, "node0's line reads %lld MB with nothing held",
		  MBS(line));
	return TT_PASS;
}
TT_WITH_CLEANUP(test_under_load, under_load_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "pmem_joins_as_a_lower_tier_and_leaves", test_joins_and_leaves },
		{ "tier_lines_exact_and_max_holds_while_pmem_leaves_under_load",
		  test_under_load },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

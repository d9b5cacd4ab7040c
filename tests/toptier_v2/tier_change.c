// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tiers.* while a tier appears and goes away at run time.
 *
 * On the hotplug topology node1 has no memory at boot, only a slower
 * pc-dimm that the kernel adds offline.  Onlining its memory blocks makes
 * node1 a second, slower tier (HMAT): the files gain node0's line, limits
 * can be written to it, and pages charged from then on are counted
 * exactly.  Offlining them again (their pages migrate to node0) leaves one
 * tier and empty files.
 *
 * Every change of the tiers rebuilds the counters: pages charged while
 * there was one tier, or moved by the kernel while a tier went away, are
 * counted in node0's line as soon as it appears, and freeing them takes
 * the line back to zero (an underflow would also splat in the console).
 *
 * toptier-test: topology=hotplug timeout=300 debug=yes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#define CURRENT		"memory.tiers.current"
#define TOL		(4LL * (long long)MB)
#define MBS(x)		((x) / (long long)MB)

static char *cg;
static struct holder *holders[2];

static int node1_blocks(const char *state, int *nblocks)
{
	return node_blocks_set(1, state, nblocks);
}

static bool wait_tiers(int want)
{
	return tiers_wait(want, 10);
}

static bool current_empty(void)
{
	char path[512], buf[256];

	snprintf(path, sizeof(path), "%s/%s", cg, CURRENT);
	return read_text(path, buf, sizeof(buf)) == 0;
}

static void cleanup(void)
{
	int n;

	node1_blocks("offline", &n);
	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	if (cg) {
		cg_destroy(cg);
		free(cg);
		cg = NULL;
	}
}

static enum tt_result appears_body(void)
{
	long long before, after, numa;
	int key0 = tier_of_node(0), n, err;

	TT_EXPECT(wait_tiers(1), "premise: more than one tier at boot");
	cg = cg_create(cg2_root(), "tt_v2_tier_change");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(current_empty(), "%s is not empty with one tier", CURRENT);

	err = node1_blocks("online_movable", &n);
	TT_EXPECT(n > 0, "premise: node1 has no memory blocks to online");
	TT_EXPECT(err == 0, "onlining node1's %d blocks: %s", n, strerror(-err));
	TT_EXPECT(wait_tiers(2), "node1's memory did not become a second tier");
	TT_EXPECT(tier_of_node(0) == key0 && tier_of_node(1) > key0,
		  "node1 (tier %d) is not below node0 (tier %d)", tier_of_node(1), key0);

	/* Pages charged with two tiers are counted in node0's line, exactly. */
	before = cg_tier_read(cg, CURRENT, key0);
	TT_EXPECT(before >= 0, "no line %d in %s with two tiers", key0, CURRENT);
	holders[0] = holder_start(cg, 64 * MB, 3, false);
	TT_EXPECT(holders[0], "no holder");
	after = cg_tier_read(cg, CURRENT, key0);
	numa = cg2_numa_upto_tier(cg, key0);
	tt_diag("line %d: %lld MB before, %lld MB after 64 MB more; numa_stat %lld MB", key0,
		MBS(before), MBS(after), MBS(numa));
	TT_EXPECT(after - before >= 64LL * (long long)MB - TOL && after - before <= 64LL * (long long)MB + TOL,
		  "the line grew by %lld MB for 64 MB on node0", MBS(after - before));
	TT_EXPECT(cg_tier_write(cg, "memory.tiers.max", key0, "1G") == 0 &&
		  cg_tier_read(cg, "memory.tiers.max", key0) == 1LL << 30,
		  "cannot set node0's line of memory.tiers.max");

	/* Offlining moves node1's pages up and takes the line away. */
	err = node1_blocks("offline", &n);
	TT_EXPECT(err == 0, "offlining node1's %d blocks: %s", n, strerror(-err));
	TT_EXPECT(wait_tiers(1), "node1 still holds memory after offlining");
	TT_EXPECT(current_empty(), "%s is not empty with one tier again", CURRENT);
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
	return TT_PASS;
}
TT_WITH_CLEANUP(test_appears, appears_body(), cleanup)

static enum tt_result earlier_pages_body(void)
{
	long long line, numa;
	int key0 = tier_of_node(0), n, err;

	TT_EXPECT(wait_tiers(1), "premise: more than one tier");
	cg = cg_create(cg2_root(), "tt_v2_tier_change_earlier");
	TT_EXPECT(cg, "cannot create the cgroup");
	holders[0] = holder_start(cg, 64 * MB, 4, false);
	TT_EXPECT(holders[0], "no holder");

	err = node1_blocks("online_movable", &n);
	TT_EXPECT(err == 0, "onlining node1's %d blocks: %s", n, strerror(-err));
	TT_EXPECT(wait_tiers(2), "node1's memory did not become a second tier");
	line = cg_tier_read(cg, CURRENT, key0);
	numa = cg2_numa_upto_tier(cg, key0);
	tt_diag("line %d: %lld MB; numa_stat anon + file on node0: %lld MB", key0, MBS(line),
		MBS(numa));
	TT_EXPECT(numa >= 64LL * (long long)MB - TOL, "premise: the holder is not on node0 (%lld MB)",
		  MBS(numa));
	TT_EXPECT(line >= numa - TOL && line <= numa + TOL,
		  "node0's line counts %lld MB of the %lld MB charged before node1 came",
		  MBS(line), MBS(numa));

	/* Freed with two tiers: the line gives back what it counted. */
	TT_EXPECT(holder_check(holders[0]) == 0, "contents changed");
	holder_stop(holders[0]);
	holders[0] = NULL;
	line = cg_tier_read(cg, CURRENT, key0);
	tt_diag("line %d after freeing: %lld kB", key0, line / 1024);
	TT_EXPECT(line >= 0 && line <= TOL, "node0's line reads %lld MB with nothing held",
		  MBS(line));
	return TT_PASS;
}
TT_WITH_CLEANUP(test_earlier_pages, earlier_pages_body(), cleanup)

/* A line of memory.tiers.current against memory.numa_stat and @want_mb. */
static bool line_matches(int key, long long want_mb, const char *step)
{
	return cg_tier_current_matches(cg, key, want_mb * (long long)MB, TOL, step);
}

static enum tt_result exact_body(void)
{
	int key0 = tier_of_node(0), n;

	TT_EXPECT(wait_tiers(1), "premise: more than one tier");
	cg = cg_create(cg2_root(), "tt_v2_tier_change_exact");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(node1_blocks("online_movable", &n) == 0 && wait_tiers(2),
		  "node1's memory did not become a second tier");

	holders[0] = holder_start(cg, 64 * MB, 5, false);
	holders[1] = holder_start(cg, 32 * MB, 6, false);
	TT_EXPECT(holders[0] && holders[1], "no holders");
	TT_EXPECT(holder_move(holders[1], 1) == 0, "cannot move 32 MB to node1");
	TT_EXPECT(line_matches(key0, 64, "two tiers, 32 MB on node1"),
		  "node0's line is off with two tiers");

	/* node1 goes: its pages come to node0 while nothing is counted. */
	TT_EXPECT(node1_blocks("offline", &n) == 0 && wait_tiers(1),
		  "node1 still holds memory after offlining");
	TT_EXPECT(current_empty(), "%s is not empty with one tier", CURRENT);

	/* And comes back: everything on node0 is counted again. */
	TT_EXPECT(node1_blocks("online_movable", &n) == 0 && wait_tiers(2),
		  "node1's memory did not come back");
	TT_EXPECT(line_matches(key0, 96, "node1 back, 96 MB on node0"),
		  "node0's line is off after node1 came back");

	TT_EXPECT(holder_move(holders[0], 1) == 0, "cannot move 64 MB to node1");
	TT_EXPECT(line_matches(key0, 32, "64 MB moved to node1"),
		  "node0's line is off after a move to node1");
	TT_EXPECT(holder_check(holders[0]) == 0 && holder_check(holders[1]) == 0,
		  "contents changed");

	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	TT_EXPECT(line_matches(key0, 0, "all freed"), "node0's line is off with nothing held");
	return TT_PASS;
}
TT_WITH_CLEANUP(test_exact, exact_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "tier_appears_and_goes_at_run_time", test_appears },
		{ "pages_charged_before_a_tier_appears_are_counted", test_earlier_pages },
		{ "counters_stay_exact_as_a_tier_goes_and_comes_back", test_exact },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tiers.* while a faster tier appears above node0's and goes again.
 *
 * On the hotplug3 topology node0 (the CPUs) and node1 (slower) hold memory
 * at boot: two tiers, so one entry, node0's.  node2 is an HBM-like pc-dimm
 * that the kernel adds offline; onlining it puts a tier above node0's, and
 * node0's entry moves from first to second place.  The limits written for
 * node0's tier follow it, and every entry counts what memory.numa_stat
 * says, the pages charged before the change included.
 *
 * toptier-test: topology=hotplug3 timeout=300 debug=yes
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
#define HBM		2	/* the pc-dimm's node */
#define SLOW		1
#define TOL		(4LL * (long long)MB)
#define MBS(x)		((x) / (long long)MB)

static char *cg;
static struct holder *holder;

static void cleanup(void)
{
	int n;

	node_blocks_set(HBM, "offline", &n);
	holder_stop(holder);
	holder = NULL;
	if (cg) {
		cg_destroy(cg);
		free(cg);
		cg = NULL;
	}
}

/* A line of memory.tiers.current against memory.numa_stat and @want_mb. */
static bool line_matches(int key, long long want_mb, const char *step)
{
	return cg_tier_current_matches(cg, key, want_mb * (long long)MB, TOL, step);
}

/* The keys of a cgroup file's lines, in order, are exactly @want. */
static bool keys_are(const char *file, const int *want, int nwant)
{
	int keys[TT_MAX_TIERS];
	long long vals[TT_MAX_TIERS];
	char path[512];
	int n;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	n = keyed_read(path, keys, vals, TT_MAX_TIERS);
	if (n != nwant)
		return false;
	for (int i = 0; i < n; i++)
		if (keys[i] != want[i])
			return false;
	return true;
}

static enum tt_result insert_body(void)
{
	int key0, keys, keyh, n;
	const long long max0 = 512LL << 20, low0 = 16LL << 20;

	TT_EXPECT(tiers_wait(2, 10), "premise: two tiers at boot");
	key0 = tier_of_node(0);
	keys = tier_of_node(SLOW);
	TT_EXPECT(key0 >= 0 && keys > key0, "premise: node0 (tier %d) above node%d (tier %d)",
		  key0, SLOW, keys);
	cg = cg_create(cg2_root(), "tt_v2_tier_insert");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(keys_are(CURRENT, (int[]){ key0 }, 1), "%s has not node0's line alone",
		  CURRENT);
	TT_EXPECT(cg_tier_write(cg, "memory.tiers.max", key0, "512M") == 0 &&
		  cg_tier_write(cg, "memory.tiers.low", key0, "16M") == 0,
		  "cannot write node0's limits");
	holder = holder_start(cg, 64 * MB, 7, false);
	TT_EXPECT(holder, "no holder");
	TT_EXPECT(line_matches(key0, 64, "two tiers"), "node0's line is off with two tiers");

	/* The HBM node's tier comes in above node0's. */
	TT_EXPECT(node_blocks_set(HBM, "online_movable", &n) == 0 && n > 0 && tiers_wait(3, 10),
		  "node%d's %d blocks did not become a third tier", HBM, n);
	keyh = tier_of_node(HBM);
	TT_EXPECT(keyh >= 0 && keyh < key0, "premise: node%d (tier %d) is not above node0 (tier %d)",
		  HBM, keyh, key0);
	TT_EXPECT(keys_are(CURRENT, (int[]){ keyh, key0 }, 2) &&
		  keys_are("memory.tiers.max", (int[]){ keyh, key0 }, 2),
		  "the files do not list the HBM tier, then node0's");
	TT_EXPECT(cg_tier_read(cg, "memory.tiers.max", key0) == max0 &&
		  cg_tier_read(cg, "memory.tiers.low", key0) == low0,
		  "node0's limits did not follow its tier: max %lld, low %lld",
		  cg_tier_read(cg, "memory.tiers.max", key0),
		  cg_tier_read(cg, "memory.tiers.low", key0));
	TT_EXPECT(cg_tier_read(cg, "memory.tiers.max", keyh) == TT_TIER_MAX &&
		  cg_tier_read(cg, "memory.tiers.low", keyh) == 0,
		  "the HBM tier's new entry does not have the defaults");
	TT_EXPECT(line_matches(keyh, 0, "HBM online") && line_matches(key0, 64, "HBM online"),
		  "the lines are off once the HBM tier came in");

	/* Cumulative: pages moved up to the HBM node stay in node0's line. */
	TT_EXPECT(holder_move(holder, HBM) == 0, "cannot move the memory to node%d", HBM);
	TT_EXPECT(line_matches(keyh, 64, "moved to HBM") &&
		  line_matches(key0, 64, "moved to HBM"),
		  "the lines are off after a move to the HBM node");

	/* The HBM node goes: its pages move down, node0's entry back first. */
	TT_EXPECT(node_blocks_set(HBM, "offline", &n) == 0 && tiers_wait(2, 10),
		  "node%d still holds memory after offlining", HBM);
	TT_EXPECT(keys_are(CURRENT, (int[]){ key0 }, 1), "%s has not node0's line alone again",
		  CURRENT);
	TT_EXPECT(cg_tier_read(cg, "memory.tiers.max", key0) == max0 &&
		  cg_tier_read(cg, "memory.tiers.low", key0) == low0,
		  "node0's limits did not come back with its entry");
	TT_EXPECT(line_matches(key0, MBS(cg2_numa_upto_tier(cg, key0)), "HBM offline"),
		  "node0's line is off after the HBM node went");
	TT_EXPECT(holder_check(holder) == 0, "contents changed");

	holder_stop(holder);
	holder = NULL;
	TT_EXPECT(line_matches(key0, 0, "all freed"), "node0's line is off with nothing held");
	return TT_PASS;
}
TT_WITH_CLEANUP(test_insert, insert_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "a_faster_tier_moves_the_entries_and_limits_follow", test_insert },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

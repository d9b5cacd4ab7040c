// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tiers.* while the lower tier grows at run time.
 *
 * On the hotplug topology, with node1's boot memory (256 MB) full, a cgroup at its max on node0's line has nowhere to demote: its
 * new pages fall back to node0 (`fallback` events) and the line goes over
 * the max.  The host then plugs 512 MB more into node1 through the QEMU
 * monitor (scripts/vm.sh -H), as an administrator would, while a task of
 * the cgroup keeps allocating; the new blocks are onlined one at a time.
 * The tiers do not change (node1 stays in its tier), node0's line equals
 * memory.numa_stat at every step, comes back under its max once node1 has
 * room, and new pages go to node1 again.
 *
 * toptier-test: topology=hotplug timeout=300 host_requests=yes debug=yes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt.h"

#define CURRENT		"memory.tiers.current"
#define LIMIT		(64LL * (long long)MB)
#define TOL		(4LL * (long long)MB)
#define ADD_MB		512
#define MBS(x)		((x) / (long long)MB)

static char *cg;
static struct holder *holders[3], *filler;
static pid_t churner;

static void cleanup(void)
{
	int n;

	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	holder_stop(filler);
	filler = NULL;
	cg_destroy_free(&cg);
	node_blocks_set(1, "offline", &n);
}

/* node0's line against memory.numa_stat, the churner held still. */
static bool line_exact(int key, const char *step)
{
	return cg_tier_line_agrees(cg, key, TOL, churner, 5, step);
}

static enum tt_result grows_body(void)
{
	int key0 = tier_of_node(0), key1, n, blocks, added;
	long long line, fallback0, free1, room, node1;
	long counts[TT_MAX_NODES];
	char label[64];

	/* Two tiers, node1's boot memory (256 MB) online and full. */
	TT_EXPECT(node_blocks_set(1, "online_movable", &n) == 0 && tiers_wait(2, 10),
		  "node1's memory did not become a second tier");
	key1 = tier_of_node(1);
	free1 = node_free(1);
	filler = holder_start(NULL, (size_t)(free1 - 8 * (long long)MB) & ~(page_size - 1), 9,
			      false);
	TT_EXPECT(filler && holder_move(filler, 1) == 0, "cannot fill node1");
	tt_diag("node1: %d of %d blocks online, %lld MB free after the filler", node_online_blocks(1),
		n, MBS(node_free(1)));

	cg = cg_create(cg2_root(), "tt_v2_hot_add");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(cg_tier_write(cg, "memory.tiers.max", key0, "64M") == 0, "cannot set the max");
	fallback0 = cg_tier_event(cg, key0, "fallback");
	holders[0] = holder_start(cg, 48 * MB, 1, false);
	holders[1] = holder_start(cg, 48 * MB, 2, false);
	TT_EXPECT(holders[0] && holders[1], "no holders");
	line = cg_tier_read(cg, CURRENT, key0);
	tt_diag("96 MB at a 64M max with node1 full: line %lld MB, fallback +%lld", MBS(line),
		cg_tier_event(cg, key0, "fallback") - fallback0);
	TT_EXPECT(cg_tier_event(cg, key0, "fallback") > fallback0,
		  "premise: no fallback with node1 full");
	TT_EXPECT(line_exact(key0, "node1 full"), "node0's line is off with node1 full");

	/* node1 grows under load. */
	churner = spawn_in(cg, churn_anon, NULL);
	TT_EXPECT(churner > 0, "no churner");
	added = host_add_dimm(1, ADD_MB);
	TT_EXPECT(added == 0, "the host did not plug %d MB into node1: %s", ADD_MB,
		  strerror(-added));
	/* Only the new blocks are offline: the boot dimm's two are online. */
	for (int i = 1; i <= ADD_MB / 128 + 1 && node_online_blocks(1) < n + ADD_MB / 128; i++) {
		TT_EXPECT(node_blocks_set_some(1, "online_movable", 1, &blocks) == 0,
			  "a new block of node1 would not go online");
		snprintf(label, sizeof(label), "%d new blocks online", node_online_blocks(1) - n);
		TT_EXPECT(line_exact(key0, label), "node0's line is off with %s", label);
	}
	TT_EXPECT(node_online_blocks(1) == n + ADD_MB / 128, "node1 has %d blocks online, not %d",
		  node_online_blocks(1), n + ADD_MB / 128);
	TT_EXPECT(tiers_wait(2, 1) && tier_of_node(1) == key1 && tier_of_node(0) == key0,
		  "the tiers changed as node1 grew");
	tt_diag("node1: %d blocks online, %lld MB free", node_online_blocks(1),
		MBS(node_free(1)));
	line = cg_tier_line_at_most(cg, key0, LIMIT + TOL, 20);
	TT_EXPECT(line <= LIMIT + TOL, "node0's line stays at %lld MB over its 64M max with room "
		  "on node1", MBS(line));
	TT_EXPECT(line_exact(key0, "node1 grown, max enforced"), "node0's line is off");

	/*
	 * 32 MB more go to node1's new memory, but for the room the max
	 * leaves on node0 once the churner's pages are gone.  They need
	 * not be the new pages themselves: the background work may demote
	 * older ones of the cgroup to make that room, so count the
	 * cgroup's gain on node1.
	 */
	TT_EXPECT(waitpid(churner, NULL, WNOHANG) == 0, "the churner died");
	child_stop(&churner, true);
	line = cg_tier_line_at_most(cg, key0, LIMIT + TOL, 20);
	room = line < LIMIT ? LIMIT - line : 0;
	node1 = cg2_numa_stat(cg, "anon", 1);
	holders[2] = holder_start(cg, 32 * MB, 3, false);
	TT_EXPECT(holders[2] && holder_count(holders[2], counts) == 0, "no holder");
	line = cg_tier_line_at_most(cg, key0, LIMIT + TOL, 20);
	node1 = cg2_numa_stat(cg, "anon", 1) - node1;
	tt_diag("32 MB more with %lld MB of room under the max: %ld MB of them on node0, the "
		"cgroup's node1 +%lld MB, line %lld MB", MBS(room), counts[0] * page_size / MB,
		MBS(node1), MBS(line));
	TT_EXPECT(line <= LIMIT + TOL, "node0's line went to %lld MB over its max", MBS(line));
	TT_EXPECT(node1 >= 32 * (long long)MB - room - TOL,
		  "the cgroup gained only %lld MB on node1 for 32 MB with %lld MB of room on node0",
		  MBS(node1), MBS(room));
	for (size_t i = 0; i < ARRAY_SIZE(holders); i++)
		TT_EXPECT(holder_check(holders[i]) == 0, "holder %zu: contents changed", i);

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
TT_WITH_CLEANUP(test_grows, grows_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "lower_tier_grows_under_load_limits_hold_lines_exact", test_grows },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

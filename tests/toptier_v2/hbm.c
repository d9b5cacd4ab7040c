// SPDX-License-Identifier: GPL-2.0
/*
 * Three tiers with the fastest one CPU-less: on hbm, the HBM node1 is
 * above the DRAM node0 that has the CPUs, and an expander node2 below.
 * The tier files have a line for HBM's tier and one for DRAM's (HBM and
 * DRAM together), fastest first, and each line's max holds at its own
 * boundary.  A cgroup holds 96 MB on node1 and 64 MB on node0:
 *  - lowering HBM's max to 32M moves 64 MB from node1 to node0, the
 *    nearest slower tier, before the write returns: DRAM's line keeps
 *    its 160 MB (a page that went from HBM to DRAM has not left it) and
 *    nothing goes to node2;
 *  - lowering DRAM's max to 128M then moves 32 MB from node0 to node2 and
 *    leaves HBM's line alone.
 * Every line matches memory.numa_stat at every step; contents intact.
 *
 * toptier-test: topology=hbm timeout=300 debug=yes
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

#define CURRENT		"memory.tiers.current"
#define MAX		"memory.tiers.max"
#define HBM_MB		96
#define DRAM_MB		64
#define TOL		(4 * (long long)MB)
#define MBS(x)		((x) / (long long)MB)

static struct holder *on_hbm, *on_dram;
static char *cg;

static void cleanup(void)
{
	holder_stop(on_hbm);
	holder_stop(on_dram);
	on_hbm = on_dram = NULL;
	unbind();
	cg_destroy_free(&cg);
}

static struct holder *hold_on(int node, long long len, uint64_t seed)
{
	struct holder *h;

	if (bind_to_node(node))
		return NULL;
	h = holder_start(cg, len, seed, false);
	unbind();
	return h;
}

/* Bytes of both holders on one node. */
static long long on_node(int node)
{
	long c1[TT_MAX_NODES], c2[TT_MAX_NODES];

	if (holder_count(on_hbm, c1) || holder_count(on_dram, c2))
		return -1;
	return (c1[node] + c2[node]) * page_size;
}

static enum tt_result hbm_body(void)
{
	int keys[TT_MAX_TIERS], k_hbm = tier_of_node(1), k_dram = tier_of_node(0);
	int k_slow = tier_of_node(2), n;
	long long vals[TT_MAX_TIERS], n2;
	char path[512];

	TT_EXPECT(!strcmp(topology(), "hbm"), "needs the hbm topology, not %s", topology());
	TT_EXPECT(k_hbm >= 0 && k_hbm < k_dram && k_dram < k_slow,
		  "premise: tiers of node1 %d, node0 %d, node2 %d, want rising", k_hbm, k_dram,
		  k_slow);
	cg = cg_create(cg2_root(), "tt_v2_hbm");
	TT_EXPECT(cg, "cannot create the cgroup");

	/* One line per tier but the slowest, fastest first. */
	snprintf(path, sizeof(path), "%s/%s", cg, MAX);
	n = keyed_read(path, keys, vals, TT_MAX_TIERS);
	TT_EXPECT(n == 2 && keys[0] == k_hbm && keys[1] == k_dram,
		  "%s has %d lines (%d, %d), want %d and %d", MAX, n, n > 0 ? keys[0] : -1,
		  n > 1 ? keys[1] : -1, k_hbm, k_dram);

	on_hbm = hold_on(1, HBM_MB * MB, 1);
	on_dram = hold_on(0, DRAM_MB * MB, 2);
	TT_EXPECT(on_hbm && on_dram, "no holders");
	TT_EXPECT(cg_tier_current_matches(cg, k_hbm, HBM_MB * MB, TOL, "placed"),
		  "HBM's line is not the %d MB on node1", HBM_MB);
	TT_EXPECT(cg_tier_current_matches(cg, k_dram, (HBM_MB + DRAM_MB) * MB, TOL, "placed"),
		  "DRAM's line is not the %d MB on nodes 1 and 0", HBM_MB + DRAM_MB);

	/* HBM's boundary: HBM -> DRAM, still within DRAM's cumulative line. */
	TT_EXPECT(cg_tier_write(cg, MAX, k_hbm, "32M") == 0, "cannot lower HBM's max");
	n2 = on_node(2);
	tt_diag("after HBM's max 32M: node1 %lld MB, node0 %lld MB, node2 %lld MB",
		MBS(on_node(1)), MBS(on_node(0)), MBS(n2));
	TT_EXPECT(cg_tier_read(cg, CURRENT, k_hbm) <= 32 * (long long)MB + TOL,
		  "HBM's line %lld MB after lowering its max to 32M",
		  MBS(cg_tier_read(cg, CURRENT, k_hbm)));
	TT_EXPECT(cg_tier_current_matches(cg, k_hbm, 32 * MB, TOL, "HBM max 32M"),
		  "HBM's line is not at its max");
	TT_EXPECT(cg_tier_current_matches(cg, k_dram, (HBM_MB + DRAM_MB) * MB, TOL,
					  "HBM max 32M"),
		  "pages demoted from HBM to DRAM left DRAM's line");
	TT_EXPECT(n2 >= 0 && n2 <= TOL, "%lld MB went to node2, past the nearest slower tier",
		  MBS(n2));

	/* DRAM's boundary: out to node2, HBM's line untouched. */
	TT_EXPECT(cg_tier_write(cg, MAX, k_dram, "128M") == 0, "cannot lower DRAM's max");
	tt_diag("after DRAM's max 128M: node1 %lld MB, node0 %lld MB, node2 %lld MB",
		MBS(on_node(1)), MBS(on_node(0)), MBS(on_node(2)));
	TT_EXPECT(cg_tier_read(cg, CURRENT, k_dram) <= 128 * (long long)MB + TOL,
		  "DRAM's line %lld MB after lowering its max to 128M",
		  MBS(cg_tier_read(cg, CURRENT, k_dram)));
	TT_EXPECT(cg_tier_current_matches(cg, k_dram, 128 * MB, TOL, "DRAM max 128M"),
		  "DRAM's line is not at its max");
	TT_EXPECT(cg_tier_current_matches(cg, k_hbm, 32 * MB, TOL, "DRAM max 128M"),
		  "lowering DRAM's max moved HBM's pages");
	TT_EXPECT(on_node(2) >= 32 * (long long)MB - TOL, "only %lld MB on node2",
		  MBS(on_node(2)));
	TT_EXPECT(holder_check(on_hbm) == 0 && holder_check(on_dram) == 0, "contents changed");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_hbm, hbm_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "each_boundary_holds_its_own_max", test_hbm },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

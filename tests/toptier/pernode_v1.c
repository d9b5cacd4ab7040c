// SPDX-License-Identifier: GPL-2.0
/*
 * With two top-tier nodes, each node's kswapd demotes only its node's
 * share of a cgroup's top-tier excess, and together they do not demote
 * more than the excess.
 *
 * On 2socket (DRAM nodes 0 and 1, each with an expander: 2 and 3), cgroup
 * A (v1) holds 192 MB on node0 and 64 MB on node1 (less on the debug
 * kernel, whose DRAM nodes have less room: the sizes keep to 3:1).
 * Fillers in B bring both DRAM nodes below their toptier watermarks; then
 * A gets a soft limit of half its usage.  The excess (128 MB) splits 3:1
 * as A's pages do: node0 must demote about 96 MB (to node2, its own
 * expander) and node1 about 32 MB (to node3), within a tenth of each.  A kswapd that took the whole excess from its own node, or
 * each node demoting until the excess is gone, ends far from that split.
 * A must end at its limit, less at most the documented bound
 * (nodes x cgroups x 64 pages), plus the statistics' lag when read.
 *
 * toptier-test: topology=2socket timeout=300 debug=yes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tt.h"

#define SOFT		"memory.toptier_soft_limit_in_bytes"
#define USAGE		"memory.toptier_usage_in_bytes"
#define A_NODE0_MAX	(192 * (long long)MB)
#define BELOW_WMARK	(24 * (long long)MB)	/* how far the fillers take each node */
#define ENFORCE_S	120
#define MB_OF(x)	((x) / (long long)MB)

static struct holder *a0, *a1, *b0, *b1;
static char *cga, *cgb;

static void cleanup(void)
{
	holder_stop(a0);
	holder_stop(a1);
	holder_stop(b0);
	holder_stop(b1);
	a0 = a1 = b0 = b1 = NULL;
	unbind();
	cg_destroy_free(&cga);
	cg_destroy_free(&cgb);
}

/* Bytes of a holder's memory on one node. */
static long long held_on(struct holder *h, int node)
{
	long counts[TT_MAX_NODES];

	return holder_count(h, counts) ? -1 : counts[node] * page_size;
}

/* A holder in @cg whose pages all come from @node. */
static struct holder *hold_on(const char *cg, int node, long long len, uint64_t seed)
{
	struct holder *h;

	if (len <= 0 || bind_to_node(node))
		return NULL;
	h = holder_start(cg, len, seed, false);
	unbind();
	return h;
}

static bool node_short(int node, long long *free, long long *wmark)
{
	node_free_toptier_wmark(node, free, wmark);
	return *wmark > 0 && *free < *wmark;
}

static void show_state(const char *step)
{
	long long f0, w0, f1, w1;

	node_free_toptier_wmark(0, &f0, &w0);
	node_free_toptier_wmark(1, &f1, &w1);
	tt_diag("%s: A %lld MB on node0, %lld MB on node1 (usage %lld MB); "
		"free/toptier watermark node0 %lld/%lld MB, node1 %lld/%lld MB",
		step, MB_OF(held_on(a0, 0)), MB_OF(held_on(a1, 1)),
		MB_OF(cg_read_ll(cga, USAGE)), MB_OF(f0), MB_OF(w0), MB_OF(f1), MB_OF(w1));
}

static enum tt_result shares_body(void)
{
	long long f, w, usage0, usage, d0, d1, want0, want1, excess, bound, tol;
	long long a0_before, a1_before, a_node0, a_node1, limit;
	char val[32];

	TT_EXPECT(!strcmp(topology(), "2socket"), "needs the 2socket topology, not %s",
		  topology());
	cga = cg_create(cg1_root(), "tt_pernode_a");
	cgb = cg_create(cg1_root(), "tt_pernode_b");
	TT_EXPECT(cga && cgb, "cannot create the cgroups");

	/* 3:1, with room on node0 for a filler that takes it below its watermark. */
	node_free_toptier_wmark(0, &f, &w);
	a_node0 = (f - w) * 2 / 3 / (long long)MB * (long long)MB;
	if (a_node0 > A_NODE0_MAX)
		a_node0 = A_NODE0_MAX;
	a_node1 = a_node0 / 3 / (long long)MB * (long long)MB;
	limit = (a_node0 + a_node1) / 2 / (long long)MB * (long long)MB;
	TT_EXPECT(a_node1 >= 16 * (long long)MB, "premise: node0 has only %lld MB above its watermark",
		  MB_OF(f - w));
	a0 = hold_on(cga, 0, a_node0, 1);
	a1 = hold_on(cga, 1, a_node1, 2);
	TT_EXPECT(a0 && a1, "no holders for A");
	a0_before = held_on(a0, 0);
	a1_before = held_on(a1, 1);
	TT_EXPECT(a0_before >= a_node0 - (long long)MB && a1_before >= a_node1 - (long long)MB,
		  "premise: A has %lld MB on node0 and %lld MB on node1",
		  MB_OF(a0_before), MB_OF(a1_before));

	/* Fill each DRAM node to below its toptier watermark. */
	node_free_toptier_wmark(0, &f, &w);
	b0 = hold_on(cgb, 0, f - w + BELOW_WMARK, 3);
	node_free_toptier_wmark(1, &f, &w);
	b1 = hold_on(cgb, 1, f - w + BELOW_WMARK, 4);
	TT_EXPECT(b0 && b1, "no fillers");
	TT_EXPECT(node_short(0, &f, &w), "premise: node0 free %lld MB, watermark %lld MB",
		  MB_OF(f), MB_OF(w));
	TT_EXPECT(node_short(1, &f, &w), "premise: node1 free %lld MB, watermark %lld MB",
		  MB_OF(f), MB_OF(w));
	/* No limit yet: nothing of A may have moved. */
	TT_EXPECT(held_on(a0, 0) == a0_before && held_on(a1, 1) == a1_before,
		  "A's pages moved before it had a limit");
	show_state("both nodes short");

	usage0 = cg_read_ll(cga, USAGE);
	TT_EXPECT(usage0 > limit, "premise: A's top-tier usage is %lld MB", MB_OF(usage0));
	excess = usage0 - limit;
	snprintf(val, sizeof(val), "%lld", limit);
	TT_EXPECT(cg_write(cga, SOFT, val) == 0, "cannot set A's soft limit to %lld MB",
		  MB_OF(limit));
	touch_node(0);
	touch_node(1);

	usage = cg_wait_at_most(cga, USAGE, limit + (long long)MB, ENFORCE_S, show_state);
	show_state("at the limit");
	TT_EXPECT(usage <= limit + (long long)MB, "A's usage still %lld MB after %d s",
		  MB_OF(usage), ENFORCE_S);
	/* Let the kswapds finish what they are doing, then look again. */
	usage = cg_wait_settled(cga, USAGE);
	show_state("settled");

	d0 = a0_before - held_on(a0, 0);
	d1 = a1_before - held_on(a1, 1);
	want0 = excess * a0_before / (a0_before + a1_before);
	want1 = excess - want0;
	tol = excess / 10;
	tt_diag("demoted %lld MB from node0 (share %lld MB), %lld MB from node1 (share %lld MB)",
		MB_OF(d0), MB_OF(want0), MB_OF(d1), MB_OF(want1));
	TT_EXPECT(d0 >= want0 - tol && d0 <= want0 + tol,
		  "node0 demoted %lld MB of A, its share is %lld MB", MB_OF(d0), MB_OF(want0));
	TT_EXPECT(d1 >= want1 - tol && d1 <= want1 + tol,
		  "node1 demoted %lld MB of A, its share is %lld MB", MB_OF(d1), MB_OF(want1));
	/* Each to its own socket's expander. */
	TT_EXPECT(held_on(a0, 2) >= d0 - (long long)MB, "node0's pages of A are not on node2");
	TT_EXPECT(held_on(a1, 3) >= d1 - (long long)MB, "node1's pages of A are not on node3");
	/*
	 * 2 nodes x 1 cgroup x 64 pages, and what the usage file can lag
	 * behind when read: up to 2 x 64 pages per CPU.
	 */
	bound = 2 * 64 * page_size + sysconf(_SC_NPROCESSORS_ONLN) * 2 * 64 * page_size;
	tt_diag("A ends %lld kB below its limit (bound %lld kB)", (limit - usage) / 1024,
		bound / 1024);
	TT_EXPECT(usage >= limit - bound, "A was demoted to %lld kB, %lld kB below its limit",
		  usage / 1024, (limit - usage) / 1024);
	TT_EXPECT(holder_check(a0) == 0 && holder_check(a1) == 0, "A's contents changed");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_shares, shares_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "each_node_demotes_its_share", test_shares },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

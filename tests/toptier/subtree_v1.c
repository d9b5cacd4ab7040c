// SPDX-License-Identifier: GPL-2.0
/*
 * Top-tier soft-limit demotion is spread over a cgroup's subtree: under a
 * limited parent, each child gives up pages in proportion to what it has
 * on the node, not the first child all of it, nor each child the same.
 *
 * P (v1) has two children, C1 with 96 MB and C2 with 48 MB on node0, and
 * a 72 MB soft limit.  With node0 below its toptier watermark, the 72 MB
 * excess must come 2:1 from C1 and C2 (48 and 24 MB), leaving them 48 and
 * 24 MB.  Equal amounts would leave 60 and 12; first come, first taken,
 * 24 and 48.  On both LRU implementations.
 *
 * toptier-test: topology=2tier timeout=300 debug=yes
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tt.h"

#define SOFT		"memory.toptier_soft_limit_in_bytes"
#define USAGE		"memory.toptier_usage_in_bytes"
#define LRU_GEN		"/sys/kernel/mm/lru_gen/enabled"
#define C1_SIZE	(96 * (long long)MB)
#define C2_SIZE	(48 * (long long)MB)
#define LIMIT	(72 * (long long)MB)
#define BELOW_WMARK	(24 * (long long)MB)
#define TOL		(8 * (long long)MB)
#define ENFORCE_S	120
#define MB_OF(x)	((x) / (long long)MB)

static struct holder *h1, *h2, *hb;
static char *cgp, *cg1, *cg2, *cgb;

static void cleanup(void)
{
	holder_stop(h1);
	holder_stop(h2);
	holder_stop(hb);
	h1 = h2 = hb = NULL;
	unbind();
	/* Children before their parent. */
	char *cgs[] = { cg1, cg2, cgp, cgb };

	for (size_t i = 0; i < ARRAY_SIZE(cgs); i++) {
		if (cgs[i])
			cg_destroy(cgs[i]);
		free(cgs[i]);
	}
	cg1 = cg2 = cgp = cgb = NULL;
	tt_restore_mglru();
}

static long long on_node0(struct holder *h)
{
	long counts[TT_MAX_NODES];

	return holder_count(h, counts) ? -1 : counts[0] * page_size;
}

static void show_state(const char *step)
{
	long long free, wmark;

	node_free_toptier_wmark(0, &free, &wmark);
	tt_diag("%s: C1 %lld MB, C2 %lld MB on node0, P usage %lld MB; node0 free %lld MB, "
		"toptier watermark %lld MB", step, MB_OF(on_node0(h1)), MB_OF(on_node0(h2)),
		MB_OF(cg_read_ll(cgp, USAGE)), MB_OF(free), MB_OF(wmark));
}

static enum tt_result proportion_body(bool mglru)
{
	long long free, wmark, c1, c2, before1, before2, usage, excess, want1, want2;
	void *p;

	if (mglru && !path_exists(LRU_GEN)) {
		tt_skip_reason("no %s: kernel without MGLRU", LRU_GEN);
		return TT_SKIP;
	}
	if (path_exists(LRU_GEN))
		TT_EXPECT(tt_set_mglru(mglru) == 0, "cannot turn MGLRU %s", mglru ? "on" : "off");
	cgp = cg_create(cg1_root(), "tt_subtree_p");
	cgb = cg_create(cg1_root(), "tt_subtree_b");
	cg1 = cgp ? cg_create(cgp, "c1") : NULL;
	cg2 = cgp ? cg_create(cgp, "c2") : NULL;
	TT_EXPECT(cgp && cgb && cg1 && cg2, "cannot create the cgroups");

	h1 = holder_start(cg1, C1_SIZE, 1, false);
	h2 = holder_start(cg2, C2_SIZE, 2, false);
	TT_EXPECT(h1 && h2, "no holders for the children");
	before1 = on_node0(h1);
	before2 = on_node0(h2);
	TT_EXPECT(before1 >= C1_SIZE - (long long)MB && before2 >= C2_SIZE - (long long)MB,
		  "premise: C1 %lld MB, C2 %lld MB on node0", MB_OF(before1), MB_OF(before2));

	node_free_toptier_wmark(0, &free, &wmark);
	TT_EXPECT(bind_to_node(0) == 0, "cannot bind to node0");
	hb = holder_start(cgb, free - wmark + BELOW_WMARK, 3, false);
	unbind();
	TT_EXPECT(hb, "no filler");
	node_free_toptier_wmark(0, &free, &wmark);
	TT_EXPECT(free < wmark, "premise: node0 free %lld MB, watermark %lld MB",
		  MB_OF(free), MB_OF(wmark));
	show_state("node0 short");

	usage = cg_read_ll(cgp, USAGE);
	TT_EXPECT(usage > LIMIT, "premise: P's usage is %lld MB", MB_OF(usage));
	excess = usage - LIMIT;
	TT_EXPECT(cg_write(cgp, SOFT, "72M") == 0, "cannot set P's soft limit");
	/* An allocation on node0 wakes its kswapd. */
	TT_EXPECT(bind_to_node(0) == 0, "cannot bind to node0");
	p = map_anon(2 * MB);
	if (p) {
		fill_pages(p, 2 * MB, 5);
		munmap(p, 2 * MB);
	}
	unbind();

	usage = cg_wait_at_most(cgp, USAGE, LIMIT + (long long)MB, ENFORCE_S, show_state);
	show_state("at the limit");
	TT_EXPECT(usage <= LIMIT + (long long)MB, "P's usage still %lld MB after %d s",
		  MB_OF(usage), ENFORCE_S);
	cg_wait_settled(cgp, USAGE);

	c1 = on_node0(h1);
	c2 = on_node0(h2);
	want1 = before1 - excess * before1 / (before1 + before2);
	want2 = before2 - excess * before2 / (before1 + before2);
	tt_diag("C1 kept %lld MB (proportional: %lld), C2 %lld MB (%lld)",
		MB_OF(c1), MB_OF(want1), MB_OF(c2), MB_OF(want2));
	TT_EXPECT(c1 >= want1 - TOL && c1 <= want1 + TOL, "C1 kept %lld MB, want %lld MB",
		  MB_OF(c1), MB_OF(want1));
	TT_EXPECT(c2 >= want2 - TOL && c2 <= want2 + TOL, "C2 kept %lld MB, want %lld MB",
		  MB_OF(c2), MB_OF(want2));
	TT_EXPECT(holder_check(h1) == 0 && holder_check(h2) == 0, "the children's contents changed");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_classic, proportion_body(false), cleanup)
TT_WITH_CLEANUP(test_mglru, proportion_body(true), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "children_lose_in_proportion_classic_lru", test_classic },
		{ "children_lose_in_proportion_mglru", test_mglru },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

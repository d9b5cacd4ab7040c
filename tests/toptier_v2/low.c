// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tiers.low (cgroup v2), line by line ("N value", N the key of a
 * tier read from sysfs; the line protects the cgroup's memory in tier N and
 * every faster tier against demotion out of them).
 *
 * node0's line: a cgroup with low 512M and a 500 MB set it has just touched
 * keeps at least 95% of it on node0 while a greedy neighbour bound to node0
 * allocates 1 GB (node0 holds 1 GB) and ordinary kswapd/direct reclaim demotes
 * (demotion_enabled on).  The same run with low 0 in the same boot is
 * reported for comparison.  Both LRU implementations.
 *
 * 3tier, node1's line (node0 + node1): a 200 MB set on node1 under low
 * 256M stays in node0 + node1 while a neighbour bound to node1 writes as
 * much as node1 holds and node1's reclaim demotes to node2; again with low
 * 0 first for comparison.
 *
 * toptier-test: topology=2tier,3tier timeout=900
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#define LOW		"memory.tiers.low"
#define MBS(x)		((x) / (long long)MB)

static struct tt_tier tiers[TT_MAX_TIERS];
static int ntiers;
/* The keys of the tiers of node0 and node1 (node k is alone in tier k). */
#define K0 (tiers[0].key)
#define K1 (tiers[1].key)

static struct holder *holders[2];
static char *cgroups[2];

static void release(void)
{
	for (size_t i = 0; i < 2; i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
		cg_destroy_free(&cgroups[i]);
	}
}

static void cleanup(void)
{
	release();
	tt_restore_demotion();
	tt_restore_mglru();
}

/* The workbench's topologies: node k alone in the k-th tier. */
static bool tiers_ok(int want)
{
	if (ntiers < want) {
		tt_diag("%d memory tiers with memory, want %d", ntiers, want);
		return false;
	}
	for (int i = 0; i < ntiers; i++)
		if (!tiers[i].nodes[i] || tiers[i].nnodes != 1) {
			tt_diag("memory_tier%d does not hold node%d alone", tiers[i].key, i);
			return false;
		}
	return true;
}

/* Bytes of the held memory on node0 .. node (the nodes of tiers <= node's). */
static long long upto_node_bytes(struct holder *h, int node)
{
	long counts[TT_MAX_NODES];
	long long sum = 0;

	if (holder_count(h, counts))
		return -1;
	for (int n = 0; n <= node; n++)
		sum += counts[n];
	return sum * page_size;
}

/* One scenario: the protected set on `node`, low on that node's tier. */
struct scenario {
	int node;		/* where the protected set lives, and the greedy's node */
	long long hot;		/* the protected set */
	size_t greedy;		/* what the neighbour writes, bound to node */
};

/*
 * The greedy neighbour: bound to the node, so that its allocations press on
 * it (unbound ones would just spill over to other nodes) and reclaim
 * demotes to make room.
 */
static int greedy_main(void *arg)
{
	const struct scenario *s = arg;
	char *buf;

	if (bind_to_node(s->node))
		return 1;
	buf = map_anon(s->greedy);
	if (!buf)
		return 2;
	fill_pages(buf, s->greedy, 22);
	return check_pages(buf, s->greedy, 22) ? 3 : 0;
}

/* The share (in %) of the protected set left in the tiers <= node's. */
static int run(const struct scenario *s, bool mglru, const char *low, long long *events)
{
	int key = tiers[s->node].key;
	long long kept;
	int rc;
	char name[40];

	if (tt_set_mglru(mglru))
		return -1;
	snprintf(name, sizeof(name), "tt_v2_low_%d_%s", s->node, low);
	cgroups[0] = cg_create(cg2_root(), name);
	cgroups[1] = cg_create(cg2_root(), "tt_v2_greedy");
	if (!cgroups[0] || !cgroups[1] || cg_tier_write(cgroups[0], LOW, key, low))
		return -1;
	holders[0] = holder_start(cgroups[0], s->hot, 21, false);
	if (!holders[0] || (s->node && holder_move(holders[0], s->node)))
		return -1;
	if (upto_node_bytes(holders[0], s->node) < s->hot - 4 * (long long)MB)
		return -1;
	if (holder_check(holders[0]))	/* touch it all: it is the hot set */
		return -1;
	rc = wait_child(spawn_in(cgroups[1], greedy_main, (void *)s));
	if (rc) {
		tt_diag("the greedy neighbour failed (%d)", rc);
		return -2;
	}
	kept = upto_node_bytes(holders[0], s->node);
	*events = cg_tier_event(cgroups[0], key, "low");
	tt_diag("low %d %s, %s: %lld of %lld MB kept on node0..node%d, low events %lld", key,
		low, mglru ? "MGLRU" : "classic LRU", MBS(kept), MBS(s->hot), s->node, *events);
	if (holder_check(holders[0]))
		return -3;
	return (int)(kept * 100 / s->hot);
}

static enum tt_result protect(const struct scenario *s, bool mglru, const char *low)
{
	long long d0, events;
	int share_unprotected, share;

	TT_EXPECT(tt_set_demotion(true) == 0, "cannot enable demotion");
	share_unprotected = run(s, mglru, "0", &events);
	TT_EXPECT(share_unprotected >= 0, "the unprotected run failed (%d)", share_unprotected);
	release();
	d0 = vmstat_prefix("pgdemote_");
	share = run(s, mglru, low, &events);
	TT_EXPECT(share >= 0, "the protected run failed (%d)", share);
	tt_diag("kept in node0..node%d: %d%% with low %s, %d%% with low 0; pgdemote_* +%lld",
		s->node, share, low, share_unprotected, vmstat_prefix("pgdemote_") - d0);
	TT_EXPECT(vmstat_prefix("pgdemote_") > d0, "premise: nothing was demoted at all");
	TT_EXPECT(share >= 95, "only %d%% of the protected set stayed in node0..node%d", share,
		  s->node);
	TT_EXPECT(events == 0, "%lld low events although the greedy cgroup was demotable",
		  events);
	return TT_PASS;
}

static enum tt_result protect_body(bool mglru)
{
	const struct scenario s = { .node = 0, .hot = 500 * MB, .greedy = 1024 * MB };

	TT_EXPECT(tiers_ok(2), "the memory tiers are not the workbench's");
	return protect(&s, mglru, "512M");
}

static enum tt_result tier1_body(void)
{
	struct scenario s = { .node = 1, .hot = 200 * MB };
	long long total1 = node_total(1);

	if (ntiers < 3) {
		tt_skip_reason("needs two tiers below node0's (3tier)");
		return TT_SKIP;
	}
	TT_EXPECT(tiers_ok(3), "the memory tiers are not the workbench's");
	TT_EXPECT(total1 > 512 * (long long)MB, "node1 has %lld MB", MBS(total1));
	/* As much as node1 holds: the protected set no longer fits beside it. */
	s.greedy = (size_t)(total1 / (long long)MB) * MB;
	return protect(&s, false, "256M");
}

static enum tt_result parse_body(void)
{
	static const char *const bad[] = { "\n", "-1", "abc", "1.5G", "12Q", "16E", "max" };
	char *cg = cgroups[0] = cg_create(cg2_root(), "tt_v2_low_parse");
	char path[512], line[128];

	TT_EXPECT(tiers_ok(2), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	snprintf(path, sizeof(path), "%s/%s", cg2_root(), LOW);
	TT_EXPECT(!path_exists(path), "%s exists on the root cgroup", LOW);
	for (int i = 0; i < ntiers - 1; i++)
		TT_EXPECT(cg_tier_read(cg, LOW, tiers[i].key) == 0,
			  "default %s line %d is %lld, want 0", LOW, tiers[i].key,
			  cg_tier_read(cg, LOW, tiers[i].key));
	TT_EXPECT(cg_tier_event(cg, K0, "low") == 0, "no low events of line %d", K0);
	TT_EXPECT(cg_tier_write(cg, LOW, K0, "512M") == 0, "writing 512M failed");
	TT_EXPECT(cg_tier_read(cg, LOW, K0) == 512LL << 20, "512M reads back as %lld",
		  cg_tier_read(cg, LOW, K0));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err;

		snprintf(line, sizeof(line), "%d %s", K0, bad[i]);
		err = cg_write(cg, LOW, line);
		TT_EXPECT(err == -EINVAL, "writing \"%d %s\" gave %s, want EINVAL", K0,
			  bad[i][0] == '\n' ? "\\n" : bad[i], err ? strerror(-err) : "success");
		TT_EXPECT(cg_tier_read(cg, LOW, K0) == 512LL << 20, "the value changed to %lld",
			  cg_tier_read(cg, LOW, K0));
	}
	return TT_PASS;
}

TT_WITH_CLEANUP(test_parse, parse_body(), cleanup)
TT_WITH_CLEANUP(test_classic, protect_body(false), cleanup)
TT_WITH_CLEANUP(test_mglru, protect_body(true), cleanup)
TT_WITH_CLEANUP(test_tier1, tier1_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "values_parse_like_memory_low", test_parse },
		{ "protected_set_stays_classic_lru", test_classic },
		{ "protected_set_stays_mglru", test_mglru },
		{ "node1_tier_low_keeps_set_above_node2", test_tier1 },
	};

	ntiers = tiers_read(tiers, TT_MAX_TIERS);
	if (ntiers < 0)
		ntiers = 0;
	return tt_run(cases, ARRAY_SIZE(cases));
}

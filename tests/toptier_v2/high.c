// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tiers.high (cgroup v2), line by line ("N value", N the key of a
 * tier read from sysfs; the line counts tier N and every faster tier):
 * usage above it comes down to it in the background, within a bounded
 * time, although node0 has plenty of free memory; only by demotion (no
 * swap-out), with the contents intact; counted as "high" events of that
 * line and in memory.stat pgdemote_tierlimit.  On both LRU implementations.
 * On 3tier, high on node1's line (node0 + node1) demotes to node2.
 * Bad values are refused with EINVAL and change nothing.
 *
 * toptier-test: topology=2tier,3tier timeout=600
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#define HIGH		"memory.tiers.high"
#define CURRENT		"memory.tiers.current"
#define TOL		(4LL * (long long)MB)
#define DEADLINE_S	30
#define MBS(x)		((x) / (long long)MB)

static struct tt_tier tiers[TT_MAX_TIERS];
static int ntiers;
/* The keys of the tiers of node0 and node1 (node k is alone in tier k). */
#define K0 (tiers[0].key)
#define K1 (tiers[1].key)

static struct holder *holder;
static char *cgroup;

static void cleanup(void)
{
	holder_stop(holder);
	holder = NULL;
	if (cgroup)
		cg_destroy(cgroup);
	free(cgroup);
	cgroup = NULL;
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

static long long node_bytes(struct holder *h, int node)
{
	long counts[TT_MAX_NODES];

	return holder_count(h, counts) ? -1 : (long long)counts[node] * page_size;
}

/* Poll until line key of current is at most limit + TOL; the time it took, or -1. */
static double wait_down_to(const char *cg, int key, long long limit)
{
	double start = now_s();

	while (now_s() < start + DEADLINE_S) {
		long long cur = cg_tier_read(cg, CURRENT, key);

		if (cur >= 0 && cur <= limit + TOL)
			return now_s() - start;
		usleep(100 * 1000);	/* poll interval */
	}
	return -1;
}

static enum tt_result parse_body(void)
{
	static const char *const bad[] = { "\n", "-1", "abc", "1.5G", "12Q", "0x10", "16E" };
	char path[512], line[128];

	TT_EXPECT(cg2_root(), "no cgroup2 hierarchy with the memory controller");
	TT_EXPECT(tiers_ok(2), "the memory tiers are not the workbench's");
	snprintf(path, sizeof(path), "%s/%s", cg2_root(), HIGH);
	TT_EXPECT(!path_exists(path), "%s exists on the root cgroup", HIGH);
	cgroup = cg_create(cg2_root(), "tt_v2_high_parse");
	TT_EXPECT(cgroup, "cannot create the cgroup");
	for (int i = 0; i < ntiers - 1; i++)
		TT_EXPECT(cg_tier_read(cgroup, HIGH, tiers[i].key) == TT_TIER_MAX,
			  "default %s line %d is %lld, want max", HIGH, tiers[i].key,
			  cg_tier_read(cgroup, HIGH, tiers[i].key));
	TT_EXPECT(cg_tier_event(cgroup, K0, "high") == 0, "no high events of line %d, or not 0",
		  K0);
	TT_EXPECT(cg_tier_write(cgroup, HIGH, K0, "512M") == 0, "writing 512M failed");
	TT_EXPECT(cg_tier_read(cgroup, HIGH, K0) == 512LL << 20, "512M reads back as %lld",
		  cg_tier_read(cgroup, HIGH, K0));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err;

		snprintf(line, sizeof(line), "%d %s", K0, bad[i]);
		err = cg_write(cgroup, HIGH, line);
		TT_EXPECT(err == -EINVAL, "writing \"%d %s\" gave %s, want EINVAL", K0,
			  bad[i][0] == '\n' ? "\\n" : bad[i], err ? strerror(-err) : "success");
		TT_EXPECT(cg_tier_read(cgroup, HIGH, K0) == 512LL << 20,
			  "the value changed to %lld", cg_tier_read(cgroup, HIGH, K0));
	}
	TT_EXPECT(cg_tier_write(cgroup, HIGH, K0, "max") == 0, "writing max failed");
	TT_EXPECT(cg_tier_read(cgroup, HIGH, K0) == TT_TIER_MAX, "\"max\" reads back as %lld",
		  cg_tier_read(cgroup, HIGH, K0));
	return TT_PASS;
}

/*
 * A 300 MB holder under high 100M on node0's line: node0 (1 GB) keeps
 * plenty free, and the usage still comes down to high.  Then lowering high
 * on the populated cgroup brings it down again.
 */
static enum tt_result background_body(bool mglru)
{
	const long long len = 300 * MB, high = 100 * MB, lower = 40 * MB;
	long long sw0 = vmstat("pswpout"), free0, cur, n1, demoted, events;
	char name[40];
	double took;

	TT_EXPECT(sw0 != LLONG_MIN, "no pswpout in /proc/vmstat");
	TT_EXPECT(tiers_ok(2), "the memory tiers are not the workbench's");
	TT_EXPECT(tt_set_mglru(mglru) == 0, "cannot turn MGLRU %s", mglru ? "on" : "off");
	snprintf(name, sizeof(name), "tt_v2_high_%s", mglru ? "mglru" : "classic");
	cgroup = cg_create(cg2_root(), name);
	TT_EXPECT(cgroup, "cannot create the cgroup");
	TT_EXPECT(cg_tier_write(cgroup, HIGH, K0, "100M") == 0, "cannot set %s", HIGH);
	holder = holder_start(cgroup, len, 11, false);
	TT_EXPECT(holder, "no holder");
	free0 = node_free(0);
	took = wait_down_to(cgroup, K0, high);
	cur = cg_tier_read(cgroup, CURRENT, K0);
	n1 = node_bytes(holder, 1);
	demoted = cg_read_key(cgroup, "memory.stat", "pgdemote_tierlimit");
	events = cg_tier_event(cgroup, K0, "high");
	tt_diag("high %d 100M: line %d %lld MB after %.1f s, node1 %lld MB, node0 free %lld MB "
		"at the start, pgdemote_tierlimit %lld, high events %lld", K0, K0, MBS(cur), took,
		MBS(n1), MBS(free0), demoted, events);
	TT_EXPECT(free0 > 256 * (long long)MB, "premise: node0 had only %lld MB free", MBS(free0));
	TT_EXPECT(took >= 0, "still %lld MB on node0's tier after %d s", MBS(cur), DEADLINE_S);
	TT_EXPECT(cur >= high - 16 * (long long)MB, "demoted far below high: %lld MB", MBS(cur));
	TT_EXPECT(n1 >= len - high - TOL, "only %lld MB on node1", MBS(n1));
	TT_EXPECT(events > 0, "no high events");
	TT_EXPECT(demoted * page_size >= len - high - TOL, "pgdemote_tierlimit %lld pages",
		  demoted);

	TT_EXPECT(cg_tier_write(cgroup, HIGH, K0, "40M") == 0, "cannot lower %s", HIGH);
	took = wait_down_to(cgroup, K0, lower);
	tt_diag("high %d 40M: line %d %lld MB after %.1f s", K0, K0,
		MBS(cg_tier_read(cgroup, CURRENT, K0)), took);
	TT_EXPECT(took >= 0, "lowering high: still %lld MB after %d s",
		  MBS(cg_tier_read(cgroup, CURRENT, K0)), DEADLINE_S);
	TT_EXPECT(cg_tier_event(cgroup, K0, "high") > events, "lowering high counted no event");
	TT_EXPECT(cg_read_key(cgroup, "memory.stat", "pgdemote_tierlimit") > demoted,
		  "lowering high demoted nothing more");
	TT_EXPECT(vmstat("pswpout") == sw0, "pages were swapped out");
	TT_EXPECT(holder_check(holder) == 0, "contents changed");
	return TT_PASS;
}

/*
 * 3tier: high on node1's line counts node0 + node1, so the usage above it
 * goes to node2, the tier below that line; node0's line has no limit and
 * counts no event.
 */
static enum tt_result tier1_body(void)
{
	const long long len = 300 * MB, high = 100 * MB;
	long long sw0 = vmstat("pswpout"), cur, n2, demoted, events;
	double took;

	if (ntiers < 3) {
		tt_skip_reason("needs two tiers below node0's (3tier)");
		return TT_SKIP;
	}
	TT_EXPECT(tiers_ok(3), "the memory tiers are not the workbench's");
	cgroup = cg_create(cg2_root(), "tt_v2_high_tier1");
	TT_EXPECT(cgroup, "cannot create the cgroup");
	TT_EXPECT(cg_tier_write(cgroup, HIGH, K1, "100M") == 0, "cannot set %s line %d", HIGH,
		  K1);
	TT_EXPECT(cg_tier_read(cgroup, HIGH, K0) == TT_TIER_MAX, "line %d changed to %lld", K0,
		  cg_tier_read(cgroup, HIGH, K0));
	holder = holder_start(cgroup, len, 12, false);
	TT_EXPECT(holder, "no holder");
	took = wait_down_to(cgroup, K1, high);
	cur = cg_tier_read(cgroup, CURRENT, K1);
	n2 = node_bytes(holder, 2);
	demoted = cg_read_key(cgroup, "memory.stat", "pgdemote_tierlimit");
	events = cg_tier_event(cgroup, K1, "high");
	tt_diag("high %d 100M: line %d %lld MB after %.1f s (line %d %lld MB), node2 %lld MB, "
		"pgdemote_tierlimit %lld, high events %lld (line %d: %lld)", K1, K1, MBS(cur),
		took, K0, MBS(cg_tier_read(cgroup, CURRENT, K0)), MBS(n2), demoted, events, K0,
		cg_tier_event(cgroup, K0, "high"));
	TT_EXPECT(took >= 0, "still %lld MB on node0 + node1 after %d s", MBS(cur), DEADLINE_S);
	TT_EXPECT(cur >= high - 16 * (long long)MB, "demoted far below high: %lld MB", MBS(cur));
	TT_EXPECT(n2 >= len - high - TOL, "only %lld MB on node2", MBS(n2));
	TT_EXPECT(events > 0, "no high events on line %d", K1);
	TT_EXPECT(cg_tier_event(cgroup, K0, "high") == 0, "high events on line %d, which has no "
		  "limit", K0);
	TT_EXPECT(demoted * page_size >= len - high - TOL, "pgdemote_tierlimit %lld pages",
		  demoted);
	TT_EXPECT(vmstat("pswpout") == sw0, "pages were swapped out");
	TT_EXPECT(holder_check(holder) == 0, "contents changed");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_parse, parse_body(), cleanup)
TT_WITH_CLEANUP(test_classic, background_body(false), cleanup)
TT_WITH_CLEANUP(test_mglru, background_body(true), cleanup)
TT_WITH_CLEANUP(test_tier1, tier1_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "values_parse_like_memory_high", test_parse },
		{ "usage_comes_down_to_high_classic_lru", test_classic },
		{ "usage_comes_down_to_high_mglru", test_mglru },
		{ "node1_tier_high_demotes_to_node2", test_tier1 },
	};

	ntiers = tiers_read(tiers, TT_MAX_TIERS);
	if (ntiers < 0)
		ntiers = 0;
	return tt_run(cases, ARRAY_SIZE(cases));
}

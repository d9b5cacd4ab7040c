// SPDX-License-Identifier: GPL-2.0
/*
 * memory.toptier.low (cgroup v2): a cgroup with low 512M and a 500 MB set
 * it has just touched keeps at least 95% of it on node0 while a greedy
 * neighbour allocates 1.5 GB and ordinary kswapd/direct reclaim demotes
 * (demotion_enabled on).  The same run with low 0 in the same boot is
 * reported for comparison.  Both LRU implementations.
 *
 * toptier-test: topology=2tier timeout=600
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#define LOW		"memory.toptier.low"
#define DEMOTION	"/sys/kernel/mm/numa/demotion_enabled"

static struct holder *holders[2];
static char *cgroups[2];
static char demotion_saved[16];

static void cleanup(void)
{
	for (size_t i = 0; i < 2; i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
		if (cgroups[i])
			cg_destroy(cgroups[i]);
		free(cgroups[i]);
		cgroups[i] = NULL;
	}
	if (demotion_saved[0])
		write_text(DEMOTION, demotion_saved);
	demotion_saved[0] = 0;
	tt_restore_mglru();
}

static long long node0_bytes(struct holder *h)
{
	long counts[TT_MAX_NODES];

	return holder_count(h, counts) ? -1 : (long long)counts[0] * page_size;
}

/*
 * The greedy neighbour: bound to node0, so that its allocations press on
 * the top tier (unbound ones would just spill over to node1) and reclaim
 * demotes to make room.
 */
static int greedy_main(void *arg)
{
	size_t len = *(const size_t *)arg;
	char *buf;

	if (bind_to_node(0))
		return 1;
	buf = map_anon(len);
	if (!buf)
		return 2;
	fill_pages(buf, len, 22);
	return check_pages(buf, len, 22) ? 3 : 0;
}

/* The share (in %) of the protected set left on node0 after the greedy run. */
static int run(bool mglru, const char *low, long long *events)
{
	const long long hot = 500 * MB;
	size_t greedy = 1536 * MB;
	long long kept;
	int rc;
	char name[40];

	if (tt_set_mglru(mglru))
		return -1;
	snprintf(name, sizeof(name), "tt_v2_low_%s", low);
	cgroups[0] = cg_create(cg2_root(), name);
	cgroups[1] = cg_create(cg2_root(), "tt_v2_greedy");
	if (!cgroups[0] || !cgroups[1] || cg_write(cgroups[0], LOW, low))
		return -1;
	holders[0] = holder_start(cgroups[0], hot, 21, false);
	if (!holders[0] || node0_bytes(holders[0]) < hot - 4 * (long long)MB)
		return -1;
	if (holder_check(holders[0]))	/* touch it all: it is the hot set */
		return -1;
	rc = wait_child(spawn_in(cgroups[1], greedy_main, &greedy));
	if (rc) {
		tt_diag("the greedy neighbour failed (%d)", rc);
		return -2;
	}
	kept = node0_bytes(holders[0]);
	*events = cg_read_key(cgroups[0], "memory.toptier.events", "low");
	tt_diag("low %s, %s: %lld of %lld MB kept on node0, low events %lld", low,
		mglru ? "MGLRU" : "classic LRU", kept / (long long)MB, hot / (long long)MB,
		*events);
	if (holder_check(holders[0]))
		return -3;
	return (int)(kept * 100 / hot);
}

static enum tt_result protect_body(bool mglru)
{
	long long d0, events;
	int share_unprotected, share;

	TT_EXPECT(read_text(DEMOTION, demotion_saved, sizeof(demotion_saved)) > 0,
		  "cannot read %s", DEMOTION);
	TT_EXPECT(write_text(DEMOTION, "1") == 0, "cannot enable demotion");
	share_unprotected = run(mglru, "0", &events);
	TT_EXPECT(share_unprotected >= 0, "the unprotected run failed (%d)", share_unprotected);
	for (size_t i = 0; i < 2; i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
		cg_destroy(cgroups[i]);
		free(cgroups[i]);
		cgroups[i] = NULL;
	}
	d0 = vmstat_prefix("pgdemote_");
	share = run(mglru, "512M", &events);
	TT_EXPECT(share >= 0, "the protected run failed (%d)", share);
	tt_diag("kept on node0: %d%% with low 512M, %d%% with low 0; pgdemote_* +%lld",
		share, share_unprotected, vmstat_prefix("pgdemote_") - d0);
	TT_EXPECT(vmstat_prefix("pgdemote_") > d0, "premise: nothing was demoted at all");
	TT_EXPECT(share >= 95, "only %d%% of the protected set stayed on node0", share);
	TT_EXPECT(events == 0, "%lld low events although the greedy cgroup was demotable",
		  events);
	return TT_PASS;
}

static enum tt_result parse_body(void)
{
	static const char *const bad[] = { "\n", "-1", "abc", "1.5G", "12Q", "16E" };
	char *cg = cgroups[0] = cg_create(cg2_root(), "tt_v2_low_parse");
	char path[512];

	TT_EXPECT(cg, "cannot create the cgroup");
	snprintf(path, sizeof(path), "%s/%s", cg2_root(), LOW);
	TT_EXPECT(!path_exists(path), "%s exists on the root cgroup", LOW);
	TT_EXPECT(cg_read_ll(cg, LOW) == 0, "default %s is %lld, want 0", LOW, cg_read_ll(cg, LOW));
	TT_EXPECT(cg_read_key(cg, "memory.toptier.events", "low") == 0, "no low events key");
	TT_EXPECT(cg_write(cg, LOW, "512M") == 0, "writing 512M failed");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err = cg_write(cg, LOW, bad[i]);

		TT_EXPECT(err == -EINVAL, "writing \"%s\" gave %s, want EINVAL",
			  bad[i][0] == '\n' ? "\\n" : bad[i], err ? strerror(-err) : "success");
		TT_EXPECT(cg_read_ll(cg, LOW) == 512LL << 20, "the value changed to %lld",
			  cg_read_ll(cg, LOW));
	}
	return TT_PASS;
}

TT_WITH_CLEANUP(test_parse, parse_body(), cleanup)
TT_WITH_CLEANUP(test_classic, protect_body(false), cleanup)
TT_WITH_CLEANUP(test_mglru, protect_body(true), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "values_parse_like_memory_low", test_parse },
		{ "protected_set_stays_classic_lru", test_classic },
		{ "protected_set_stays_mglru", test_mglru },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

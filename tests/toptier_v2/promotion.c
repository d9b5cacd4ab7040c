// SPDX-License-Identifier: GPL-2.0
/*
 * Limit-aware promotion: with numa_balancing=2, a cgroup at the max of
 * node0's line of memory.tiers.max (its key read from sysfs) keeps its hot
 * pages on node1 (the promotions are refused and counted in memory.stat
 * pgpromote_tierlimit_denied and as "max" events of that line),
 * while the same workload in a cgroup without a limit, in the same boot, is
 * promoted: that control shows the refusal, not idle NUMA balancing, keeps
 * the pages down.
 *
 * toptier-test: topology=2tier timeout=300
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tt.h"

#define NUMA_BALANCING	"/proc/sys/kernel/numa_balancing"
#define HOT_LEN		(64 * MB)
#define HOT_S		30

static char *cgroups[2];
static char balancing_saved[16];

static void cleanup(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cgroups); i++) {
		if (cgroups[i])
			cg_destroy(cgroups[i]);
		free(cgroups[i]);
		cgroups[i] = NULL;
	}
	if (balancing_saved[0])
		write_text(NUMA_BALANCING, balancing_saved);
	balancing_saved[0] = 0;
}

/* What the child saw, in shared memory. */
struct hot_result {
	long npages;
	long on_node0_start;
	long on_node0_end;
	long bad_pages;
	double secs;
};

struct hot_job {
	struct hot_result *res;
	long want;		/* stop early once this many are on node0; 0: never */
};

static long on_node0(const char *buf, size_t len)
{
	long counts[TT_MAX_NODES];

	return pages_per_node(buf, len, counts) ? -1 : counts[0];
}

/*
 * In a fresh process (NUMA balancing state is per process): place a region
 * on node1, make it movable again, and keep it hot for HOT_S seconds.
 */
static int hot_child(void *arg)
{
	const struct hot_job *job = arg;
	struct hot_result *r = job->res;
	char *buf = map_anon(HOT_LEN);
	double start, next = 0;

	if (!buf || place_on_node(buf, HOT_LEN, 1))
		return 1;
	fill_pages(buf, HOT_LEN, 5);
	if (reset_policy(buf, HOT_LEN))
		return 2;
	r->npages = HOT_LEN / page_size;
	r->on_node0_start = on_node0(buf, HOT_LEN);
	start = now_s();
	while (now_s() < start + HOT_S) {
		touch_pages(buf, HOT_LEN);
		if (now_s() >= next) {
			r->on_node0_end = on_node0(buf, HOT_LEN);
			if (job->want && r->on_node0_end >= job->want)
				break;
			next = now_s() + 0.5;
		}
	}
	r->on_node0_end = on_node0(buf, HOT_LEN);
	r->secs = now_s() - start;
	r->bad_pages = check_pages(buf, HOT_LEN, 5);
	return 0;
}

static int run_hot(const char *cg, struct hot_result *r, long want)
{
	struct hot_job job = { .res = r, .want = want };

	memset(r, 0, sizeof(*r));
	return wait_child(spawn_in(cg, hot_child, &job));
}

static enum tt_result denied_body(void)
{
	struct hot_result *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long long denied, events, promoted0, promoted;
	char *capped, *free_cg;
	int rc, k0 = tier_of_node(0);

	TT_EXPECT(r != MAP_FAILED, "mmap: %s", strerror(errno));
	TT_EXPECT(k0 >= 0, "node0 is in no memory tier");
	TT_EXPECT(read_text(NUMA_BALANCING, balancing_saved, sizeof(balancing_saved)) > 0,
		  "cannot read %s", NUMA_BALANCING);
	capped = cgroups[0] = cg_create(cg2_root(), "tt_v2_promo_capped");
	free_cg = cgroups[1] = cg_create(cg2_root(), "tt_v2_promo_free");
	TT_EXPECT(capped && free_cg, "cannot create the cgroups");
	/* At max from the start: everything it has is already over. */
	TT_EXPECT(cg_tier_write(capped, "memory.tiers.max", k0, "0") == 0,
		  "cannot set max %d 0", k0);
	TT_EXPECT(write_text(NUMA_BALANCING, "2") == 0, "cannot set numa_balancing=2");

	promoted0 = vmstat("pgpromote_success");
	rc = run_hot(capped, r, 0);
	TT_EXPECT(rc == 0, "the capped child failed (%d)", rc);
	denied = cg_read_key(capped, "memory.stat", "pgpromote_tierlimit_denied");
	events = cg_tier_event(capped, k0, "max");
	promoted = vmstat("pgpromote_success") - promoted0;
	tt_diag("capped: %ld/%ld pages on node0 after %.0f s; pgpromote_tierlimit_denied %lld, "
		"max events %lld, pgpromote_success +%lld", r->on_node0_end, r->npages, r->secs,
		denied, events, promoted);
	TT_EXPECT(r->on_node0_start == 0, "premise: %ld pages started on node0",
		  r->on_node0_start);
	TT_EXPECT(r->on_node0_end <= r->npages / 100, "%ld pages were promoted past max 0",
		  r->on_node0_end);
	TT_EXPECT(denied > 0, "pgpromote_tierlimit_denied did not grow");
	TT_EXPECT(events > 0, "no max events for the refused promotions");
	TT_EXPECT(r->bad_pages == 0, "%ld pages changed", r->bad_pages);

	/* The control: the same workload without a limit is promoted. */
	rc = run_hot(free_cg, r, r->npages * 9 / 10);
	TT_EXPECT(rc == 0, "the unlimited child failed (%d)", rc);
	tt_diag("unlimited: %ld/%ld pages on node0 after %.0f s", r->on_node0_end, r->npages,
		r->secs);
	TT_EXPECT(r->on_node0_end >= r->npages * 9 / 10,
		  "control: without a limit only %ld/%ld pages were promoted in %d s",
		  r->on_node0_end, r->npages, HOT_S);
	TT_EXPECT(cg_read_key(free_cg, "memory.stat", "pgpromote_tierlimit_denied") == 0,
		  "promotions of an unlimited cgroup were refused");
	munmap(r, sizeof(*r));
	return TT_PASS;
}

static enum tt_result test_denied(void)
{
	enum tt_result res = denied_body();

	cleanup();
	return res;
}

int main(void)
{
	static const struct tt_case cases[] = {
		{ "promotion_refused_at_max", test_denied },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A cgroup at memory.tiers.max keeps its hottest pages in the budget.
 *
 * Promotion into a tier where the cgroup is at its limit is an exchange:
 * the cgroup's coldest pages there go down first.  So a 64M budget full
 * of cold data takes in a 32M region that turns hot, and the cap holds
 * throughout.  Placements the task insists on (MPOL_BIND, move_pages) are
 * not redirected at max: they land where asked, and the cgroup's coldest
 * pages make up for them in the background.  Both LRU implementations.
 *
 * toptier-test: topology=2tier timeout=400 alone=yes
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
#define BUDGET		(64 * MB)
#define COLD_LEN	(80 * MB)	/* more than the budget: it is full */
#define HOT_LEN		(32 * MB)
#define HOT_S		30
/* The overshoot bound is one folio per allocating task; a little slack. */
#define SLACK		(1 * MB)
#define SETTLE_S	30

static char *cgroup;
static char balancing_saved[16];

static void cleanup(void)
{
	if (cgroup)
		cg_destroy(cgroup);
	free(cgroup);
	cgroup = NULL;
	if (balancing_saved[0])
		write_text(NUMA_BALANCING, balancing_saved);
	balancing_saved[0] = 0;
	tt_restore_mglru();
}

/* A cgroup with memory.tiers.max of BUDGET on node0's tier. */
static const char *capped_cgroup(const char *name, int *key)
{
	*key = tier_of_node(0);
	if (*key < 0)
		return NULL;
	cgroup = cg_create(cg2_root(), name);
	if (!cgroup || cg_tier_write(cgroup, "memory.tiers.max", *key, "64M"))
		return NULL;
	return cgroup;
}

static long node0_pages(const char *buf, size_t len)
{
	long counts[TT_MAX_NODES];

	return pages_per_node(buf, len, counts) ? -1 : counts[0];
}

/* What the child saw, in shared memory. */
struct hot_result {
	long npages;
	long on_node0_start;
	long on_node0_end;
	long long current_max;	/* largest memory.tiers.current sampled */
	long bad_pages;
	double secs;
};

struct hot_job {
	const char *cg;
	int key;
	struct hot_result *res;
};

/*
 * Fill the budget with cold data, then keep a region on node1 hot until
 * 80% of it is on node0 or HOT_S seconds have passed.
 */
static int hot_child(void *arg)
{
	const struct hot_job *job = arg;
	struct hot_result *r = job->res;
	char *cold = map_anon(COLD_LEN), *hot = map_anon(HOT_LEN);
	double start, next = 0;

	if (!cold || !hot)
		return 1;
	fill_pages(cold, COLD_LEN, 11);
	if (place_on_node(hot, HOT_LEN, 1))
		return 2;
	fill_pages(hot, HOT_LEN, 12);
	if (reset_policy(hot, HOT_LEN))
		return 3;
	r->npages = HOT_LEN / page_size;
	r->on_node0_start = node0_pages(hot, HOT_LEN);
	start = now_s();
	while (now_s() < start + HOT_S) {
		touch_pages(hot, HOT_LEN);
		if (now_s() >= next) {
			long long cur = cg_tier_read(job->cg, "memory.tiers.current", job->key);

			if (cur > r->current_max)
				r->current_max = cur;
			r->on_node0_end = node0_pages(hot, HOT_LEN);
			if (r->on_node0_end >= r->npages * 8 / 10)
				break;
			next = now_s() + 0.5;
		}
	}
	r->secs = now_s() - start;
	r->on_node0_end = node0_pages(hot, HOT_LEN);
	r->bad_pages = check_pages(cold, COLD_LEN, 11) + check_pages(hot, HOT_LEN, 12);
	return 0;
}

static enum tt_result hot_set_body(bool mglru)
{
	struct hot_result *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct hot_job job = { .res = r };
	long long exchanged, demoted, peak;
	const char *cg;
	int rc, key;

	TT_EXPECT(r != MAP_FAILED, "mmap: %s", strerror(errno));
	TT_EXPECT(tt_set_mglru(mglru) == 0, "cannot turn MGLRU %s", mglru ? "on" : "off");
	TT_EXPECT(read_text(NUMA_BALANCING, balancing_saved, sizeof(balancing_saved)) > 0,
		  "cannot read %s", NUMA_BALANCING);
	cg = capped_cgroup(mglru ? "tt_v2_exchange_mglru" : "tt_v2_exchange", &key);
	TT_EXPECT(cg, "cannot set up a cgroup with memory.tiers.max 64M");
	TT_EXPECT(write_text(NUMA_BALANCING, "2") == 0, "cannot set numa_balancing=2");
	job.cg = cg;
	job.key = key;

	rc = wait_child(spawn_in(cg, hot_child, &job));
	TT_EXPECT(rc == 0, "the child failed (%d)", rc);
	exchanged = cg_read_key(cg, "memory.stat", "pgpromote_tierlimit_exchange");
	demoted = cg_read_key(cg, "memory.stat", "pgdemote_tierlimit");
	peak = cg_tier_read(cg, "memory.tiers.peak", key);
	tt_diag("%s: hot region: %ld/%ld pages on node0 after %.1f s (%ld at the start); "
		"current at most %lld KB, peak %lld KB; exchanged %lld, demoted %lld",
		mglru ? "MGLRU" : "classic LRU", r->on_node0_end, r->npages, r->secs, r->on_node0_start,
		r->current_max >> 10, peak >> 10, exchanged, demoted);
	TT_EXPECT(r->on_node0_start <= r->npages / 100,
		  "premise: %ld hot pages started on node0", r->on_node0_start);
	TT_EXPECT(r->on_node0_end >= r->npages * 8 / 10,
		  "only %ld/%ld hot pages reached node0 in %d s", r->on_node0_end,
		  r->npages, HOT_S);
	TT_EXPECT(r->current_max <= (long long)(BUDGET + SLACK),
		  "memory.tiers.current reached %lld KB over max 64M", r->current_max >> 10);
	TT_EXPECT(peak <= (long long)(BUDGET + SLACK),
		  "memory.tiers.peak is %lld KB over max 64M", peak >> 10);
	TT_EXPECT(exchanged > 0, "pgpromote_tierlimit_exchange did not grow");
	TT_EXPECT(demoted > 0, "pgdemote_tierlimit did not grow");
	TT_EXPECT(r->bad_pages == 0, "%ld pages changed", r->bad_pages);
	munmap(r, sizeof(*r));
	return TT_PASS;
}
TT_WITH_CLEANUP(test_hot_set, hot_set_body(false), cleanup)
TT_WITH_CLEANUP(test_hot_set_mglru, hot_set_body(true), cleanup)

/* Poll until the cgroup is back within its budget; its last value. */
static long long settle(const char *cg, int key)
{
	double deadline = now_s() + SETTLE_S;
	long long cur;

	do {
		cur = cg_tier_read(cg, "memory.tiers.current", key);
		if (cur != LLONG_MIN && cur <= (long long)(BUDGET + SLACK))
			break;
		usleep(100 * 1000);
	} while (now_s() < deadline);
	return cur;
}

struct bound_result {
	long npages;
	long on_node0;		/* right after the allocation or the move */
	long moved_status_bad;	/* move_pages statuses other than node0 */
	long long settled;	/* memory.tiers.current once back in budget */
	long bad_pages;
};

struct bound_job {
	const char *cg;
	int key;
	bool move;		/* move_pages instead of MPOL_BIND */
	struct bound_result *res;
};

/*
 * Fill the budget, then ask for 32M on node0: with MPOL_BIND, or with
 * move_pages(2) of a region on node1.  Stay alive while the parent
 * checks, so the pages stay charged.
 */
static int bound_child(void *arg)
{
	const struct bound_job *job = arg;
	struct bound_result *r = job->res;
	char *cold = map_anon(COLD_LEN), *buf = map_anon(HOT_LEN);

	if (!cold || !buf)
		return 1;
	fill_pages(cold, COLD_LEN, 21);
	r->npages = HOT_LEN / page_size;
	if (job->move) {
		if (place_on_node(buf, HOT_LEN, 1))
			return 2;
		fill_pages(buf, HOT_LEN, 22);
		if (reset_policy(buf, HOT_LEN) || move_range(buf, HOT_LEN, 0))
			return 3;
	} else {
		if (bind_to_node(0))
			return 4;
		fill_pages(buf, HOT_LEN, 22);
		if (unbind())
			return 5;
	}
	r->on_node0 = node0_pages(buf, HOT_LEN);
	r->settled = settle(job->cg, job->key);
	r->bad_pages = check_pages(cold, COLD_LEN, 21) + check_pages(buf, HOT_LEN, 22);
	return 0;
}

static enum tt_result placement_body(bool move)
{
	struct bound_result *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct bound_job job = { .res = r, .move = move };
	const char *cg;
	int rc, key;

	TT_EXPECT(r != MAP_FAILED, "mmap: %s", strerror(errno));
	cg = capped_cgroup(move ? "tt_v2_move_at_max" : "tt_v2_bind_at_max", &key);
	TT_EXPECT(cg, "cannot set up a cgroup with memory.tiers.max 64M");
	job.cg = cg;
	job.key = key;
	rc = wait_child(spawn_in(cg, bound_child, &job));
	TT_EXPECT(rc == 0, "the child failed (%d)", rc);
	tt_diag("%s: %ld/%ld pages on node0 at once; memory.tiers.current %lld KB after",
		move ? "move_pages to node0" : "MPOL_BIND to node0", r->on_node0, r->npages,
		r->settled >> 10);
	TT_EXPECT(r->on_node0 == r->npages, "only %ld/%ld pages were placed on node0",
		  r->on_node0, r->npages);
	TT_EXPECT(r->settled <= (long long)(BUDGET + SLACK),
		  "the cap did not hold: memory.tiers.current %lld KB after %d s",
		  r->settled >> 10, SETTLE_S);
	TT_EXPECT(r->bad_pages == 0, "%ld pages changed", r->bad_pages);
	munmap(r, sizeof(*r));
	return TT_PASS;
}
TT_WITH_CLEANUP(test_bind, placement_body(false), cleanup)
TT_WITH_CLEANUP(test_move, placement_body(true), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "hot_set_enters_full_budget_by_exchange", test_hot_set },
		{ "hot_set_enters_full_budget_by_exchange_mglru", test_hot_set_mglru },
		{ "bound_task_at_max_not_redirected_cap_holds", test_bind },
		{ "move_pages_to_node0_at_max_honoured_cap_holds", test_move },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

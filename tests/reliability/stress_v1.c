// SPDX-License-Identifier: GPL-2.0
/*
 * Stress under cgroup v1 (issue 7): the same workload and chaos as
 * stress_v2 (see lib/stress.c), in a boot of its own with the v1 memory
 * hierarchy.  The limit rewritten at random is
 * memory.toptier_soft_limit_in_bytes (-1 or sizes, read back after each
 * write), besides vm.toptier_scale_factor (which decides when kswapd
 * enforces it); before a worker is moved, the target's
 * memory.move_charge_at_immigrate is set now and then, so that the charges
 * (and the top-tier accounting) move with the task.
 *
 * At quiescent points memory.toptier_usage_in_bytes must equal
 * hierarchical_total of memory.numa_stat summed over the top-tier nodes,
 * within TOL (lib/stress.c), must not be negative (an unsigned wrap) and must
 * not exceed memory.usage_in_bytes.  At teardown tt_stress must come back
 * to exactly 0.
 *
 * Parameters (kernel command line): toptier.stress_seconds=N (30),
 * toptier.seed=S (from the clock; printed first).
 *
 * toptier-test: topology=2tier timeout=600 debug=yes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"
#include "stress.h"

#define USAGE	"memory.toptier_usage_in_bytes"
#define SOFT	"memory.toptier_soft_limit_in_bytes"

static const char *const total[] = { "hierarchical_total" };

static int v1_enable_children(const char *cg)
{
	(void)cg;
	return 0;	/* v1 memory cgroups are always hierarchical in 6.12 */
}

/* Unsigned in the kernel: a wrapped counter reads negative here. */
static long long v1_usage(const char *cg)
{
	char path[512], buf[64];

	snprintf(path, sizeof(path), "%s/%s", cg, USAGE);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return LLONG_MIN;
	return (long long)strtoull(buf, NULL, 10);
}

static bool v1_check(const char *cg, long long *usage, long long *ref, char *why,
		     size_t len)
{
	long long tt = v1_usage(cg), usage_bytes = cg_read_ll(cg, "memory.usage_in_bytes");
	long long pages = numa_stat_toptier(cg, total, 1);
	long long n0 = pages == LLONG_MIN ? LLONG_MIN : pages * page_size;

	*usage = tt;
	*ref = n0;
	snprintf(why, len, "%s %lld kB, numa_stat hierarchical_total on top tier %lld kB, "
		 "usage_in_bytes %lld kB", USAGE, tt / 1024, n0 / 1024, usage_bytes / 1024);
	if (tt == LLONG_MIN || usage_bytes == LLONG_MIN || n0 == LLONG_MIN)
		return false;
	return tt >= 0 && llabs(tt - n0) <= TOL && tt <= usage_bytes + TOL;
}

/* What v1 limit files read when unlimited: PAGE_COUNTER_MAX pages. */
static long long unlimited(void)
{
	return LLONG_MAX / page_size * page_size;
}

static int v1_rewrite(const char *cg, struct rng *r, char *why, size_t len)
{
	uint64_t x = rnd(r);
	long long want, got;
	char val[32];
	int err;

	switch (x % 8) {
	case 0:
	case 1:
	case 2:
		snprintf(val, sizeof(val), "-1");
		want = unlimited();
		break;
	case 3:
		snprintf(val, sizeof(val), "0");
		want = 0;
		break;
	case 4:
		want = 16 * MB + (long long)(x >> 8) % (496 * MB);
		snprintf(val, sizeof(val), "%lld", want);
		want = want / page_size * page_size;
		break;
	default:
		want = (16LL << ((x >> 8) % 6)) * (long long)MB;	/* 16M..512M */
		snprintf(val, sizeof(val), "%lldM", want / (long long)MB);
	}
	err = cg_write(cg, SOFT, val);
	snprintf(why, len, "write %s to %s/%s: %s", val, cg, SOFT, strerror(-err));
	if (err)
		return err;
	got = cg_read_ll(cg, SOFT);
	if (got != want) {
		snprintf(why, len, "%s/%s reads %lld after writing %s (want %lld)", cg, SOFT, got,
			 val, want);
		return -EINVAL;
	}
	return 0;
}

/* Charge moving (deprecated, but still in 6.12): anon and file pages. */
static void v1_before_attach(const char *cg, struct rng *r)
{
	uint64_t x = rnd(r);

	if (x % 4 == 0)
		cg_write(cg, "memory.move_charge_at_immigrate", (x >> 8) & 1 ? "3" : "0");
}

/*
 * A new worker comes from the root cgroup, and maps pages charged there
 * (the test binary's page cache, pages shared copy-on-write with the
 * parent): charge moving would bring them into tt_stress for good, so a
 * worker always joins its first cgroup without it.  Later moves, between
 * tt_stress's cgroups, move only what the workers charged themselves.
 */
static void v1_before_spawn(const char *cg)
{
	cg_write(cg, "memory.move_charge_at_immigrate", "0");
}

/* The statistics get to exactly 0 once flushed (every 2 s). */
static bool v1_parent_empty(const char *cg, char *why, size_t len)
{
	long long tt = v1_usage(cg), all = cg_read_key(cg, "memory.stat", "total_rss");
	long long cache = cg_read_key(cg, "memory.stat", "total_cache");
	long long pages = numa_stat_toptier(cg, total, 1);
	snprintf(why, len, "%s %lld, numa_stat hierarchical_total on top tier %lld pages, "
		 "total_rss %lld, total_cache %lld", USAGE, tt, pages, all, cache);
	return tt == 0 && pages == 0 && all == 0 && cache == 0;
}

static const struct stress_ops v1_ops = {
	.name = "v1",
	.root = cg1_root,
	.enable_children = v1_enable_children,
	.check = v1_check,
	.usage = v1_usage,
	.rewrite = v1_rewrite,
	.before_attach = v1_before_attach,
	.before_spawn = v1_before_spawn,
	.parent_empty = v1_parent_empty,
};

int main(void)
{
	return stress_main(&v1_ops);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * "auto" entries of memory.tiers.{low,high,max} and the memory_tiers_auto
 * mount option.
 *
 * An auto entry of max is memory.max times the share of the machine's
 * memory in the entry's tiers, and follows memory.max; an explicit value
 * beats it; with memory_tiers_auto every entry not written is auto.  The
 * expected limit is computed here from the nodes' MemTotal (the managed
 * memory the kernel divides by) and checked by what a writer can keep in
 * the fastest tier.
 *
 * toptier-test: topology=2tier,3tier timeout=300
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "tt.h"

#define FILL		(480 * MB)	/* above the auto share of 1G, below 640M */
/* The counter may hold a batch of precharged pages per CPU, and rounding. */
#define TOL		(4LL * (long long)MB)
#define SETTLE_S	30

static char *cgroup;
static struct holder *holder;
static bool remounted;

static void cleanup(void)
{
	holder_stop(holder);
	holder = NULL;
	if (cgroup)
		cg_destroy(cgroup);
	free(cgroup);
	cgroup = NULL;
	if (remounted)
		mount(NULL, cg2_root(), NULL, MS_REMOUNT, "");
	remounted = false;
}

/* Does a cgroup's keyed file have the line "<key> <value>"? */
static bool has_line(const char *cg, const char *file, int key, const char *value)
{
	char path[256], buf[512], want[64];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	snprintf(want, sizeof(want), "\n%d %s\n", key, value);
	buf[0] = '\n';
	if (read_text(path, buf + 1, sizeof(buf) - 1) <= 0)
		return false;
	return strstr(buf, want) != NULL;
}

static bool reads_auto(const char *cg, const char *file, int key)
{
	return has_line(cg, file, key, "auto");
}

/* memory.max * (memory of the fastest tier) / (all memory), in bytes. */
static long long auto_share(long long base)
{
	struct tt_tier tiers[TT_MAX_TIERS];
	long long part = 0, all = 0;
	int n = tiers_read(tiers, TT_MAX_TIERS);

	if (n < 2)
		return LLONG_MIN;
	for (int t = 0; t < n; t++) {
		for (int node = 0; node < TT_MAX_NODES; node++) {
			if (!tiers[t].nodes[node])
				continue;
			all += node_total(node);
			if (t == 0)
				part += node_total(node);
		}
	}
	return all ? (long long)((__int128)base * part / all) : LLONG_MIN;
}

/* Poll until the fastest tier's usage is within @limit; its last value. */
static long long settle_within(const char *cg, int key, long long limit)
{
	double deadline = now_s() + SETTLE_S;
	long long cur;

	do {
		cur = cg_tier_read(cg, "memory.tiers.current", key);
		if (cur != LLONG_MIN && cur <= limit + TOL)
			break;
		usleep(100 * 1000);
	} while (now_s() < deadline);
	return cur;
}

static enum tt_result follows_memory_max_body(void)
{
	int key = tier_of_node(0);
	long long want, cur, first;

	TT_EXPECT(key >= 0, "no tier for node0");
	cgroup = cg_create(cg2_root(), "tt_v2_auto");
	TT_EXPECT(cgroup, "cannot create the cgroup");
	TT_EXPECT(cg_write(cgroup, "memory.max", "1G") == 0, "cannot set memory.max");
	TT_EXPECT(cg_tier_write(cgroup, "memory.tiers.max", key, "auto") == 0,
		  "writing auto: %s", strerror(errno));
	TT_EXPECT(reads_auto(cgroup, "memory.tiers.max", key),
		  "memory.tiers.max does not read \"%d auto\"", key);

	want = auto_share(1LL << 30);
	TT_EXPECT(want > 0, "cannot compute the share of the fastest tier");
	holder = holder_start(cgroup, FILL, 31, false);
	TT_EXPECT(holder, "the holder failed");
	first = settle_within(cgroup, key, want);
	tt_diag("memory.max 1G: auto max %lld KB, fastest tier holds %lld KB", want >> 10,
		first >> 10);
	TT_EXPECT(first <= want + TOL && first >= want - TOL,
		  "with memory.max 1G the fastest tier holds %lld KB, auto is %lld KB",
		  first >> 10, want >> 10);

	/* It follows memory.max down: the excess is demoted. */
	TT_EXPECT(cg_write(cgroup, "memory.max", "640M") == 0, "cannot lower memory.max");
	want = auto_share(640LL << 20);
	cur = settle_within(cgroup, key, want);
	tt_diag("memory.max 640M: auto max %lld KB, fastest tier holds %lld KB", want >> 10,
		cur >> 10);
	TT_EXPECT(cur <= want + TOL, "the fastest tier holds %lld KB over auto %lld KB",
		  cur >> 10, want >> 10);
	TT_EXPECT(cur < first - 16 * (long long)MB, "nothing was demoted (%lld KB, was %lld KB)",
		  cur >> 10, first >> 10);

	/* An explicit value beats auto, whatever memory.max does. */
	TT_EXPECT(cg_tier_write(cgroup, "memory.tiers.max", key, "32M") == 0,
		  "writing 32M: %s", strerror(errno));
	TT_EXPECT(cg_write(cgroup, "memory.max", "2G") == 0, "cannot raise memory.max");
	TT_EXPECT(cg_tier_read(cgroup, "memory.tiers.max", key) == 32 * (long long)MB,
		  "memory.tiers.max reads %lld after memory.max changed",
		  cg_tier_read(cgroup, "memory.tiers.max", key));
	cur = settle_within(cgroup, key, 32 * MB);
	TT_EXPECT(cur <= 32 * (long long)MB + TOL, "the fastest tier holds %lld KB over 32M",
		  cur >> 10);
	TT_EXPECT(holder_check(holder) == 0, "the held memory changed");
	return TT_PASS;
}
TT_WITH_CLEANUP(test_follows_memory_max, follows_memory_max_body(), cleanup)

static enum tt_result mount_option_body(void)
{
	int key = tier_of_node(0);
	const char *root = cg2_root();
	long long want, cur;

	TT_EXPECT(key >= 0 && root, "no tier for node0, or no cgroup2");
	cgroup = cg_create(root, "tt_v2_auto_mount");
	TT_EXPECT(cgroup, "cannot create the cgroup");
	TT_EXPECT(cg_tier_write(cgroup, "memory.tiers.low", key, "8M") == 0, "cannot set low");
	TT_EXPECT(cg_write(cgroup, "memory.high", "768M") == 0, "cannot set memory.high");
	TT_EXPECT(cg_tier_read(cgroup, "memory.tiers.high", key) == TT_TIER_MAX,
		  "memory.tiers.high is not max before the option");

	TT_EXPECT(mount(NULL, root, NULL, MS_REMOUNT, "memory_tiers_auto") == 0,
		  "remount with memory_tiers_auto: %s", strerror(errno));
	remounted = true;
	/* Not written: auto.  Written: kept. */
	TT_EXPECT(reads_auto(cgroup, "memory.tiers.high", key),
		  "memory.tiers.high does not read auto under memory_tiers_auto");
	TT_EXPECT(reads_auto(cgroup, "memory.tiers.max", key),
		  "memory.tiers.max does not read auto under memory_tiers_auto");
	TT_EXPECT(has_line(cgroup, "memory.tiers.low", key, "8388608"),
		  "the written memory.tiers.low changed under memory_tiers_auto");

	/* And high, derived from memory.high, holds. */
	want = auto_share(768LL << 20);
	holder = holder_start(cgroup, FILL, 32, false);
	TT_EXPECT(holder, "the holder failed");
	cur = settle_within(cgroup, key, want);
	tt_diag("memory.high 768M: auto high %lld KB, fastest tier holds %lld KB",
		want >> 10, cur >> 10);
	TT_EXPECT(cur <= want + TOL, "the fastest tier holds %lld KB over auto high %lld KB",
		  cur >> 10, want >> 10);

	TT_EXPECT(mount(NULL, root, NULL, MS_REMOUNT, "") == 0, "remount without the option: %s",
		  strerror(errno));
	remounted = false;
	TT_EXPECT(has_line(cgroup, "memory.tiers.high", key, "max"),
		  "memory.tiers.high is not max again without the option");
	return TT_PASS;
}
TT_WITH_CLEANUP(test_mount_option, mount_option_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "auto_max_follows_memory_max_explicit_wins", test_follows_memory_max },
		{ "memory_tiers_auto_mount_option", test_mount_option },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

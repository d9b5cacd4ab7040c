// SPDX-License-Identifier: GPL-2.0
/*
 * The top-tier node mask: /sys/devices/system/node/is_toptier lists the
 * top-tier nodes, those of the fastest tier that holds memory: node0, the
 * only node with CPUs, on 2tier and 3tier, and the CPU-less HBM node1
 * above it on hbm.  /proc/meminfo's TopTierTotal and TopTierFree sum those
 * nodes' MemTotal and MemFree.
 *
 * toptier-test: topology=2tier,3tier,hbm timeout=120
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

#define NODE_SYS	"/sys/devices/system/node"
#define IS_TOPTIER	NODE_SYS "/is_toptier"
/* Totals do not move; free memory does between two reads. */
#define TOTAL_TOL	(4 * MB)
#define FREE_TOL	(32 * MB)

/* The one top-tier node of the topology. */
static int top_node(void)
{
	return strcmp(topology(), "hbm") ? 0 : 1;
}

static int read_mask(const char *path, char *list, size_t len, bool nodes[TT_MAX_NODES])
{
	if (read_text(path, list, len) <= 0)
		return -1;
	return nodelist_parse(list, nodes);
}

static enum tt_result test_lists_top_node(void)
{
	bool nodes[TT_MAX_NODES];
	char list[128];
	int n;

	TT_EXPECT(path_exists(IS_TOPTIER), "no %s", IS_TOPTIER);
	n = read_mask(IS_TOPTIER, list, sizeof(list), nodes);
	tt_diag("is_toptier: %s", strtok(list, "\n") ?: "(empty)");
	TT_EXPECT(n == 1 && nodes[top_node()], "is_toptier is not exactly node%d on %s",
		  top_node(), topology());
	return TT_PASS;
}

static enum tt_result test_format(void)
{
	char list[128];
	int len = read_text(IS_TOPTIER, list, sizeof(list));

	/* Printed like the other node state files: a list and a newline. */
	TT_EXPECT(len > 1 && list[len - 1] == '\n', "is_toptier does not end in a newline");
	return TT_PASS;
}

static enum tt_result test_subset_of_has_memory(void)
{
	bool top[TT_MAX_NODES], mem[TT_MAX_NODES];
	char list[128], mlist[128];

	TT_EXPECT(read_mask(IS_TOPTIER, list, sizeof(list), top) > 0, "cannot parse is_toptier");
	TT_EXPECT(read_mask(NODE_SYS "/has_memory", mlist, sizeof(mlist), mem) > 0,
		  "cannot parse has_memory");
	for (int n = 0; n < TT_MAX_NODES; n++)
		TT_EXPECT(!top[n] || mem[n], "top-tier node%d has no memory (has_memory %s)",
			  n, mlist);
	return TT_PASS;
}

static long long meminfo_bytes(const char *key)
{
	long long kb = file_key("/proc/meminfo", key);

	return kb == LLONG_MIN ? kb : kb * 1024;
}

static enum tt_result test_total(void)
{
	long long tt = meminfo_bytes("TopTierTotal"), top = node_total(top_node());

	TT_EXPECT(tt != LLONG_MIN, "no TopTierTotal in /proc/meminfo");
	tt_diag("TopTierTotal %lld kB, node%d MemTotal %lld kB, MemTotal %lld kB",
		tt / 1024, top_node(), top / 1024, meminfo_bytes("MemTotal") / 1024);
	TT_EXPECT(llabs(tt - top) <= (long long)TOTAL_TOL,
		  "TopTierTotal differs from node%d's MemTotal by %lld kB", top_node(),
		  (tt - top) / 1024);
	TT_EXPECT(tt <= meminfo_bytes("MemTotal"), "TopTierTotal above MemTotal");
	return TT_PASS;
}

static enum tt_result test_free(void)
{
	/* The top node's free memory read on both sides of TopTierFree brackets it. */
	long long before = node_free(top_node()), tt = meminfo_bytes("TopTierFree");
	long long after = node_free(top_node());
	long long lo = before < after ? before : after, hi = before < after ? after : before;

	TT_EXPECT(tt != LLONG_MIN, "no TopTierFree in /proc/meminfo");
	tt_diag("TopTierFree %lld kB, node%d MemFree %lld..%lld kB", tt / 1024, top_node(),
		lo / 1024, hi / 1024);
	TT_EXPECT(tt >= lo - (long long)FREE_TOL && tt <= hi + (long long)FREE_TOL,
		  "TopTierFree is not node%d's MemFree", top_node());
	TT_EXPECT(tt <= meminfo_bytes("TopTierTotal"), "TopTierFree above TopTierTotal");
	return TT_PASS;
}

/* Read-only files refuse writes and keep their value. */
static enum tt_result test_read_only(void)
{
	const char *root = cg1_root();
	char before[128], after[128], usage[256];
	int err;

	TT_EXPECT(read_text(IS_TOPTIER, before, sizeof(before)) > 0, "cannot read is_toptier");
	err = write_text(IS_TOPTIER, "1");
	TT_EXPECT(err < 0, "writing is_toptier succeeded");
	TT_EXPECT(read_text(IS_TOPTIER, after, sizeof(after)) > 0 && !strcmp(before, after),
		  "is_toptier changed after a refused write");
	TT_EXPECT(root, "no cgroup v1 memory hierarchy");
	snprintf(usage, sizeof(usage), "%s/memory.toptier_usage_in_bytes", root);
	TT_EXPECT(path_exists(usage), "no %s", usage);
	err = write_text(usage, "0");
	tt_diag("write is_toptier and toptier_usage_in_bytes: %s", strerror(-err));
	TT_EXPECT(err < 0, "writing memory.toptier_usage_in_bytes succeeded");
	return TT_PASS;
}

int main(void)
{
	static const struct tt_case cases[] = {
		{ "is_toptier_lists_the_fastest_node", test_lists_top_node },
		{ "is_toptier_is_a_node_list", test_format },
		{ "is_toptier_subset_of_has_memory", test_subset_of_has_memory },
		{ "meminfo_toptier_total_is_the_fastest_node", test_total },
		{ "meminfo_toptier_free_is_the_fastest_node", test_free },
		{ "read_only_files_refuse_writes", test_read_only },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

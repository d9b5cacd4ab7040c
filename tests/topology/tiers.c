// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's memory tiers match the QEMU topology: one tier per node, in
 * the order of the nodes' HMAT performance, and demotion going one tier
 * down: 0 -> 1 on 2tier, 0 -> 1 -> 2 on 3tier, and 1 -> 0 -> 2 on hbm,
 * where the CPU-less HBM node1 is faster than node0, which has the CPUs.
 *
 * toptier-test: topology=2tier,3tier,hbm timeout=120
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>

#include "tt.h"

/* The topology's nodes, fastest first; returns how many. */
static int node_order(const int **order)
{
	static const int two[] = { 0, 1 }, three[] = { 0, 1, 2 }, hbm[] = { 1, 0, 2 };

	if (!strcmp(topology(), "hbm")) {
		*order = hbm;
		return 3;
	}
	if (!strcmp(topology(), "3tier")) {
		*order = three;
		return 3;
	}
	*order = two;
	return 2;
}

static int expected_nodes(void)
{
	const int *order;

	return node_order(&order);
}

/* tier_of[node] = the memory_tierN id holding the node, or -1. */
static int read_tiers(int tier_of[TT_MAX_NODES])
{
	const char *base = "/sys/devices/virtual/memory_tiering";
	struct dirent *de;
	int ntiers = 0;
	DIR *d;

	for (int i = 0; i < TT_MAX_NODES; i++)
		tier_of[i] = -1;
	d = opendir(base);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[512], list[128];
		bool nodes[TT_MAX_NODES];
		int id;

		if (sscanf(de->d_name, "memory_tier%d", &id) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s/nodelist", base, de->d_name);
		if (read_text(path, list, sizeof(list)) < 0 || nodelist_parse(list, nodes) < 0)
			continue;
		tt_diag("%s: nodes %s", de->d_name, strtok(list, "\n"));
		ntiers++;
		for (int n = 0; n < TT_MAX_NODES; n++)
			if (nodes[n])
				tier_of[n] = id;
	}
	closedir(d);
	return ntiers;
}

static enum tt_result test_tier_count(void)
{
	int tier_of[TT_MAX_NODES], n = read_tiers(tier_of);
	char list[64];
	bool nodes[TT_MAX_NODES];

	TT_EXPECT(read_text("/sys/devices/system/node/has_memory", list, sizeof(list)) > 0,
		  "no has_memory");
	TT_EXPECT(nodelist_parse(list, nodes) == expected_nodes(),
		  "has_memory is %s, want %d nodes", list, expected_nodes());
	TT_EXPECT(n == expected_nodes(), "%d memory tiers, want %d", n, expected_nodes());
	return TT_PASS;
}

static enum tt_result test_tier_order(void)
{
	int tier_of[TT_MAX_NODES], nr;
	const int *order;

	TT_EXPECT(read_tiers(tier_of) > 0, "no memory tiers");
	nr = node_order(&order);
	/* A larger tier id is a larger abstract distance: a slower tier. */
	for (int i = 1; i < nr; i++)
		TT_EXPECT(tier_of[order[i]] > tier_of[order[i - 1]],
			  "node%d in tier %d is not below node%d in tier %d", order[i],
			  tier_of[order[i]], order[i - 1], tier_of[order[i - 1]]);
	return TT_PASS;
}

/*
 * 6.12 has no sysfs file for demotion targets; the kernel logs them once
 * when the tiers are built ("Demotion targets for Node 0: preferred: 1, ...").
 */
static enum tt_result test_demotion_targets(void)
{
	static char log[1 << 20];
	int len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1);
	const int *order;
	int nr = node_order(&order);

	TT_EXPECT(len > 0, "cannot read the kernel log");
	log[len] = 0;
	for (int i = 0; i + 1 < nr; i++) {
		char want[64], *last = NULL, *p = log;

		snprintf(want, sizeof(want), "Demotion targets for Node %d: preferred: ",
			 order[i]);
		while ((p = strstr(p, want)))
			last = p++;
		TT_EXPECT(last, "no demotion targets logged for node%d", order[i]);
		last += strlen(want);
		TT_EXPECT(atoi(last) == order[i + 1], "node%d demotes to %d, want %d",
			  order[i], atoi(last), order[i + 1]);
	}
	/* The lowest tier demotes nowhere. */
	{
		char want[64];

		snprintf(want, sizeof(want), "Demotion targets for Node %d: preferred:",
			 order[nr - 1]);
		TT_EXPECT(!strstr(log, want), "the lowest node has a demotion target");
	}
	return TT_PASS;
}

static enum tt_result test_release(void)
{
	char rel[128];

	TT_EXPECT(read_text("/proc/sys/kernel/osrelease", rel, sizeof(rel)) > 0, "no osrelease");
	rel[strcspn(rel, "\n")] = 0;
	tt_diag("kernel %s", rel);
	TT_EXPECT(strlen(rel) > 8 && !strcmp(rel + strlen(rel) - 8, "-toptier"),
		  "release %s does not end in -toptier", rel);
	return TT_PASS;
}

int main(void)
{
	static const struct tt_case cases[] = {
		{ "kernel_release_names_series", test_release },
		{ "one_tier_per_node", test_tier_count },
		{ "cpu_less_nodes_in_lower_tiers", test_tier_order },
		{ "demotion_goes_one_tier_down", test_demotion_targets },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

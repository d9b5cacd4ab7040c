// SPDX-License-Identifier: GPL-2.0
/*
 * tierstat --json in the guest agrees with the files it reads, while a
 * workload's memory moves between the tiers: node totals match node
 * meminfo, and a cgroup's top-tier and lower-tier bytes match
 * memory.toptier_usage_in_bytes and memory.numa_stat.  On cgroup v2 both
 * views follow the moves: the JSON (top tier from memory.tiers.current,
 * node1's bytes from memory.numa_stat) and the human table (-r, bytes).
 *
 * toptier-test: topology=2tier timeout=180
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

#define TIERSTAT	"/tests/bin/tierstat"
#define TOL		(4 * MB)

static char json[1 << 16];

static int run_tierstat(const char *args)
{
	char cmd[256];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), TIERSTAT " --json %s", args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(json, 1, sizeof(json) - 1, f);
	json[n] = 0;
	return pclose(f) == 0 && n > 0 ? 0 : -1;
}

/* The number after "key": at or after from; LLONG_MIN if absent or null. */
static long long json_num(const char *from, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = from ? strstr(from, pat) : NULL;
	if (!p || !strchr("-0123456789", p[strlen(pat)]))
		return LLONG_MIN;
	return strtoll(p + strlen(pat), NULL, 10);
}

static enum tt_result test_nodes(void)
{
	const char *n0;

	/* tierstat refuses to run without a cgroup hierarchy to show. */
	TT_EXPECT(cg1_root(), "no cgroup v1 memory hierarchy");
	TT_EXPECT(run_tierstat("") == 0, "tierstat failed: %.200s", json);
	n0 = strstr(json, "\"nodes\":[{\"node\":0,");
	TT_EXPECT(n0, "no node0 in %.300s", json);
	tt_diag("node0 total %lld, meminfo %lld", json_num(n0, "total_bytes"), node_total(0));
	TT_EXPECT(json_num(n0, "total_bytes") == node_total(0), "node0 total differs");
	TT_EXPECT(strstr(json, "\"toptier_nodes\":[0]"), "top tier is not node0");
	return TT_PASS;
}

/* Poll until tierstat's view of cg matches the kernel's files. */
static bool cgroup_agrees(const char *cg, const char *name, const char *step)
{
	double deadline = now_s() + 5;
	char pat[64];

	snprintf(pat, sizeof(pat), "{\"path\":\"/%s\"", name);
	while (now_s() < deadline) {
		long long top, lower, ktop, klower;
		const char *entry;

		if (run_tierstat(name))
			return false;
		entry = strstr(json, pat);
		top = json_num(entry, "toptier_bytes");
		lower = json_num(entry, "lower_bytes");
		ktop = cg_read_ll(cg, "memory.toptier_usage_in_bytes");
		klower = cg1_numa_stat(cg, "hierarchical_total", 1) * page_size;
		if (top != LLONG_MIN && llabs(top - ktop) <= (long long)TOL &&
		    lower != LLONG_MIN && llabs(lower - klower) <= (long long)TOL) {
			tt_diag("%s: tierstat top %lld MB lower %lld MB, kernel %lld MB / %lld MB",
				step, top / (long long)MB, lower / (long long)MB,
				ktop / (long long)MB, klower / (long long)MB);
			return true;
		}
	}
	tt_diag("%s: tierstat disagrees: %.400s", step, json);
	return false;
}

static enum tt_result test_cgroup_follows_moves(void)
{
	const char *root = cg1_root();
	char *cg = cg_create(root, "tt_json");
	struct holder *h;
	enum tt_result r = TT_FAIL;

	TT_EXPECT(cg, "no cgroup");
	h = holder_start(cg, 128 * MB, 5, false);
	if (!h)
		goto out;
	if (!cgroup_agrees(cg, "tt_json", "allocated"))
		goto out;
	if (holder_move(h, 1) || !cgroup_agrees(cg, "tt_json", "moved to node1"))
		goto out;
	if (holder_move(h, 0) || !cgroup_agrees(cg, "tt_json", "moved back to node0"))
		goto out;
	r = TT_PASS;
out:
	holder_stop(h);
	cg_destroy(cg);
	return r;
}

int main(void)
{
	static const struct tt_case cases[] = {
		{ "nodes_match_meminfo", test_nodes },
		{ "cgroup_follows_memory_between_tiers", test_cgroup_follows_moves },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

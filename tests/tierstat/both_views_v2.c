// SPDX-License-Identifier: GPL-2.0
/*
 * On cgroup v2, both of tierstat's views follow a workload's memory
 * between the tiers: the JSON (the top tier from memory.tiers.current,
 * node1's bytes from memory.numa_stat) and the human table (-r: bytes),
 * against the kernel's files, while 128 MB move to node1 and back.
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

static char out[1 << 16];

/* tierstat <opt> <args>, its output in out[]. */
static int run_tierstat_as(const char *args, bool json_opt)
{
	char cmd[512];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), TIERSTAT " %s %s", json_opt ? "--json" : "-r", args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	return pclose(f) == 0 && n > 0 ? 0 : -1;
}

static int run_tierstat(const char *args)
{
	return run_tierstat_as(args, true);
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

/*
 * cgroup v2: tierstat's JSON and its human table (-r: bytes) both follow
 * the moves, against the top tier's line of memory.tiers.current and
 * node1's anon bytes in memory.numa_stat.
 */
static bool v2_agrees(const char *cg, const char *name, const char *step)
{
	int key = tier_of_node(0);
	double deadline = now_s() + 5;
	char args[256], pat[64], row[64];

	snprintf(args, sizeof(args), "--cgroupfs %s %s", cg2_root(), name);
	snprintf(pat, sizeof(pat), "{\"path\":\"/%s\"", name);
	snprintf(row, sizeof(row), "\n/%s ", name);
	while (now_s() < deadline) {
		long long top, n1, ktop, kn1, htop = LLONG_MIN;
		const char *entry, *line;

		if (run_tierstat(args))
			return false;
		entry = strstr(out, pat);
		top = json_num(entry, "toptier_bytes");
		n1 = json_num(entry ? strstr(entry, "\"node_bytes\":") : NULL, "1");
		ktop = cg_tier_read(cg, "memory.tiers.current", key);
		kn1 = cg2_numa_stat(cg, "anon", 1);
		if (run_tierstat_as(args, false))
			return false;
		/* "/name USAGE TOPTIER TOP% ...": the third column */
		line = strstr(out, row);
		if (line && sscanf(line + strlen(row), "%*s %lld", &htop) != 1)
			htop = LLONG_MIN;
		if (top != LLONG_MIN && llabs(top - ktop) <= (long long)TOL &&
		    htop != LLONG_MIN && llabs(htop - ktop) <= (long long)TOL &&
		    n1 != LLONG_MIN && llabs(n1 - kn1) <= (long long)TOL) {
			tt_diag("%s: tierstat top %lld MB (table %lld MB), node1 %lld MB; kernel %lld MB, %lld MB",
				step, top / (long long)MB, htop / (long long)MB, n1 / (long long)MB,
				ktop / (long long)MB, kn1 / (long long)MB);
			return true;
		}
	}
	tt_diag("%s: tierstat disagrees: %.600s", step, out);
	return false;
}

static enum tt_result test_v2_both_views(void)
{
	const char *root = cg2_root();
	char *cg;
	struct holder *h;
	enum tt_result r = TT_FAIL;

	TT_EXPECT(root, "no cgroup v2 hierarchy");
	cg = cg_create(root, "tt_json2");
	TT_EXPECT(cg, "no cgroup");
	h = holder_start(cg, 128 * MB, 6, false);
	if (!h)
		goto out;
	if (!v2_agrees(cg, "tt_json2", "allocated"))
		goto out;
	if (holder_move(h, 1) || !v2_agrees(cg, "tt_json2", "moved to node1"))
		goto out;
	if (holder_move(h, 0) || !v2_agrees(cg, "tt_json2", "moved back to node0"))
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
		{ "v2_json_and_table_follow_memory_between_tiers", test_v2_both_views },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

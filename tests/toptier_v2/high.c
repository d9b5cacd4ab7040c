// SPDX-License-Identifier: GPL-2.0
/*
 * memory.toptier.high (cgroup v2): usage above it comes down to it in the
 * background, within a bounded time, although node0 has plenty of free
 * memory; only by demotion (no swap-out), with the contents intact; counted
 * as "high" events and in pgdemote_toptier.  On both LRU implementations.
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

#define HIGH		"memory.toptier.high"
#define CURRENT		"memory.toptier.current"
#define EVENTS		"memory.toptier.events"
#define TOL		(4LL * (long long)MB)
#define DEADLINE_S	30

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

static long long node_bytes(struct holder *h, int node)
{
	long counts[TT_MAX_NODES];

	return holder_count(h, counts) ? -1 : (long long)counts[node] * page_size;
}

/* Poll until current is at most limit + TOL; the time it took, or -1. */
static double wait_down_to(const char *cg, long long limit)
{
	double start = now_s();

	while (now_s() < start + DEADLINE_S) {
		long long cur = cg_read_ll(cg, CURRENT);

		if (cur >= 0 && cur <= limit + TOL)
			return now_s() - start;
		usleep(100 * 1000);	/* poll interval */
	}
	return -1;
}

static enum tt_result parse_body(void)
{
	static const char *const bad[] = { "\n", "-1", "abc", "1.5G", "12Q", "0x10", "16E" };
	char path[512], buf[64];

	TT_EXPECT(cg2_root(), "no cgroup2 hierarchy with the memory controller");
	snprintf(path, sizeof(path), "%s/%s", cg2_root(), HIGH);
	TT_EXPECT(!path_exists(path), "%s exists on the root cgroup", HIGH);
	cgroup = cg_create(cg2_root(), "tt_v2_high_parse");
	TT_EXPECT(cgroup, "cannot create the cgroup");
	snprintf(path, sizeof(path), "%s/%s", cgroup, HIGH);
	TT_EXPECT(read_text(path, buf, sizeof(buf)) > 0 && !strcmp(buf, "max\n"),
		  "default %s is \"%s\", want max", HIGH, buf);
	TT_EXPECT(cg_read_key(cgroup, EVENTS, "high") == 0, "no high events key, or not 0");
	TT_EXPECT(cg_write(cgroup, HIGH, "512M") == 0, "writing 512M failed");
	TT_EXPECT(cg_read_ll(cgroup, HIGH) == 512LL << 20, "512M reads back as %lld",
		  cg_read_ll(cgroup, HIGH));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err = cg_write(cgroup, HIGH, bad[i]);

		TT_EXPECT(err == -EINVAL, "writing \"%s\" gave %s, want EINVAL",
			  bad[i][0] == '\n' ? "\\n" : bad[i], err ? strerror(-err) : "success");
		TT_EXPECT(cg_read_ll(cgroup, HIGH) == 512LL << 20, "the value changed to %lld",
			  cg_read_ll(cgroup, HIGH));
	}
	TT_EXPECT(cg_write(cgroup, HIGH, "max") == 0, "writing max failed");
	TT_EXPECT(read_text(path, buf, sizeof(buf)) > 0 && !strcmp(buf, "max\n"),
		  "\"max\" reads back as %s", buf);
	return TT_PASS;
}

/*
 * A 300 MB holder under high 100M: node0 (1 GB) keeps plenty free, and the
 * usage still comes down to high.  Then lowering high on the populated
 * cgroup brings it down again.
 */
static enum tt_result background_body(bool mglru)
{
	const long long len = 300 * MB, high = 100 * MB, lower = 40 * MB;
	long long sw0 = vmstat("pswpout"), free0, cur, n1, demoted, events;
	char name[40];
	double took;

	TT_EXPECT(tt_set_mglru(mglru) == 0, "cannot turn MGLRU %s", mglru ? "on" : "off");
	snprintf(name, sizeof(name), "tt_v2_high_%s", mglru ? "mglru" : "classic");
	cgroup = cg_create(cg2_root(), name);
	TT_EXPECT(cgroup, "cannot create the cgroup");
	TT_EXPECT(cg_write(cgroup, HIGH, "100M") == 0, "cannot set %s", HIGH);
	holder = holder_start(cgroup, len, 11, false);
	TT_EXPECT(holder, "no holder");
	free0 = node_free(0);
	took = wait_down_to(cgroup, high);
	cur = cg_read_ll(cgroup, CURRENT);
	n1 = node_bytes(holder, 1);
	demoted = cg_read_key(cgroup, "memory.stat", "pgdemote_toptier");
	events = cg_read_key(cgroup, EVENTS, "high");
	tt_diag("high 100M: current %lld MB after %.1f s, node1 %lld MB, node0 free %lld MB "
		"at the start, pgdemote_toptier %lld, high events %lld", cur / (long long)MB, took,
		n1 / (long long)MB, free0 / (long long)MB, demoted, events);
	TT_EXPECT(free0 > 256 * (long long)MB, "premise: node0 had only %lld MB free",
		  free0 / (long long)MB);
	TT_EXPECT(took >= 0, "still %lld MB on the top tier after %d s", cur / (long long)MB,
		  DEADLINE_S);
	TT_EXPECT(cur >= high - 16 * (long long)MB, "demoted far below high: %lld MB",
		  cur / (long long)MB);
	TT_EXPECT(n1 >= len - high - TOL, "only %lld MB on node1", n1 / (long long)MB);
	TT_EXPECT(events > 0, "no high events");
	TT_EXPECT(demoted * page_size >= len - high - TOL, "pgdemote_toptier %lld pages",
		  demoted);

	TT_EXPECT(cg_write(cgroup, HIGH, "40M") == 0, "cannot lower %s", HIGH);
	took = wait_down_to(cgroup, lower);
	tt_diag("high 40M: current %lld MB after %.1f s", cg_read_ll(cgroup, CURRENT) /
		(long long)MB, took);
	TT_EXPECT(took >= 0, "lowering high: still %lld MB after %d s",
		  cg_read_ll(cgroup, CURRENT) / (long long)MB, DEADLINE_S);
	TT_EXPECT(cg_read_key(cgroup, EVENTS, "high") > events, "lowering high counted no event");
	TT_EXPECT(vmstat("pswpout") == sw0, "pages were swapped out");
	TT_EXPECT(holder_check(holder) == 0, "contents changed");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_parse, parse_body(), cleanup)
TT_WITH_CLEANUP(test_classic, background_body(false), cleanup)
TT_WITH_CLEANUP(test_mglru, background_body(true), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "values_parse_like_memory_high", test_parse },
		{ "usage_comes_down_to_high_classic_lru", test_classic },
		{ "usage_comes_down_to_high_mglru", test_mglru },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

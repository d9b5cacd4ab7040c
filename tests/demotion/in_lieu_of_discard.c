// SPDX-License-Identifier: GPL-2.0
/*
 * Demotion in lieu of discard (upstream since 5.15): with no swap, a task
 * bound to node0 that outgrows it keeps its memory because reclaim demotes
 * the overflow to node1.  With demotion off, no page is demoted.
 *
 * toptier-test: topology=2tier timeout=300
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tt.h"

#define DEMOTION_ENABLED "/sys/kernel/mm/numa/demotion_enabled"

struct result {
	size_t bad_pages;
	long on_node[TT_MAX_NODES];
	int error;
};

static struct result *res;
static size_t alloc_len;

static int bound_writer(void *arg)
{
	char *buf;

	/* Without demotion or swap the writer cannot fit: make it the victim. */
	if (arg && write_text("/proc/self/oom_score_adj", "1000"))
		return 12;
	if (bind_to_node(0))
		return 10;
	buf = map_anon(alloc_len);
	if (!buf)
		return 11;
	fill_pages(buf, alloc_len, 42);
	res->bad_pages = check_pages(buf, alloc_len, 42);
	res->error = pages_per_node(buf, alloc_len, res->on_node);
	return 0;
}

static long long demoted(void)
{
	return vmstat_prefix("pgdemote_");
}

static bool swap_off(void)
{
	char buf[256];

	/* Only the header line: no swap device. */
	return read_text("/proc/swaps", buf, sizeof(buf)) >= 0 && !strchr(strchr(buf, '\n') + 1, '\n');
}

static void setup(void)
{
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(res, 0, sizeof(*res));
	/* A third more than node0 holds: reclaim must make room. */
	alloc_len = (node_total(0) * 4 / 3) & ~(page_size - 1);
}

static enum tt_result test_demotes_overflow(void)
{
	long long d0, oom0;
	pid_t pid;
	int rc;

	setup();
	TT_EXPECT(swap_off(), "this test needs a guest without swap");
	TT_EXPECT(write_text(DEMOTION_ENABLED, "1") == 0, "cannot enable demotion");
	d0 = demoted();
	oom0 = vmstat("oom_kill");
	tt_diag("writing %zu MB from a task bound to node0 (%lld MB)",
		alloc_len / MB, node_total(0) / (long long)MB);
	pid = spawn_in(NULL, bound_writer, NULL);
	rc = wait_child(pid);
	tt_diag("pgdemote +%lld, node0 %ld MB, node1 %ld MB, oom_kill +%lld",
		demoted() - d0, res->on_node[0] * page_size / MB,
		res->on_node[1] * page_size / MB, vmstat("oom_kill") - oom0);
	TT_EXPECT(rc == 0, "the bound writer exited with %d", rc);
	TT_EXPECT(vmstat("oom_kill") == oom0, "something was OOM-killed");
	TT_EXPECT(res->error == 0, "move_pages status query failed");
	TT_EXPECT(res->bad_pages == 0, "%zu pages lost their contents", res->bad_pages);
	TT_EXPECT(demoted() - d0 > 0, "no page was demoted");
	/* Whatever did not fit on node0 must be on node1. */
	TT_EXPECT(res->on_node[1] * page_size >= (long long)(alloc_len - node_total(0)),
		  "only %ld MB on node1", res->on_node[1] * page_size / MB);
	return TT_PASS;
}

static enum tt_result test_no_demotion_when_off(void)
{
	long long d0;
	pid_t pid;
	int rc;

	setup();
	TT_EXPECT(write_text(DEMOTION_ENABLED, "0") == 0, "cannot disable demotion");
	d0 = demoted();
	pid = spawn_in(NULL, bound_writer, "victim");
	rc = wait_child(pid);
	tt_diag("writer status %d, pgdemote +%lld", rc, demoted() - d0);
	TT_EXPECT(demoted() == d0, "%lld pages demoted with demotion off", demoted() - d0);
	TT_EXPECT(rc == 128 + SIGKILL, "the writer was not OOM-killed (status %d)", rc);
	return TT_PASS;
}

int main(void)
{
	static const struct tt_case cases[] = {
		{ "overflow_of_node0_is_demoted_not_lost", test_demotes_overflow },
		{ "no_demotion_when_disabled", test_no_demotion_when_off },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The seed's own machine: DRAM and persistent memory turned into system
 * RAM with dax/kmem (the pmem topology; tests/lib pmem_to_kmem()).
 *
 * 1. Demotion in lieu of discard into the PMEM node, switched on the
 *    seed's way, vm.zone_reclaim_mode bit 8 (RECLAIM_MIGRATE), with
 *    /sys/kernel/mm/numa/demotion_enabled off: a task bound to node0 that
 *    writes a third more than node0 holds keeps every page, the overflow
 *    on node1, nothing OOM-killed.
 * 2. memory.toptier_usage_in_bytes (v1) stays equal to memory.numa_stat's
 *    hierarchical_total summed over the top-tier nodes while the PMEM
 *    joins (node0 stops being the only tier), while its blocks go offline
 *    one at a time under load (pages migrate to node0) and after kmem
 *    gives it back; freeing everything takes it to zero.
 *
 * toptier-test: topology=pmem timeout=300
 */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt.h"

#define DEMOTION_ENABLED	"/sys/kernel/mm/numa/demotion_enabled"
#define ZONE_RECLAIM_MODE	"/proc/sys/vm/zone_reclaim_mode"
#define RECLAIM_MIGRATE		8
#define USAGE			"memory.toptier_usage_in_bytes"
#define TOL			(4LL * (long long)MB)
#define SETTLE_S		5
#define MBS(x)			((x) / (long long)MB)

struct writer_result {
	size_t bad_pages;
	long on_node[TT_MAX_NODES];
	int error;
};

static struct writer_result *res;
static size_t write_len;
static char saved_demotion[8], saved_zrm[8];
static char *cg;
static struct holder *holders[2];
static pid_t churner;

/* ---- 1: demotion in lieu of discard, zone_reclaim_mode bit 8 ------------ */

static int bound_writer(void *arg __attribute__((unused)))
{
	char *buf;

	if (bind_to_node(0))
		return 10;
	buf = map_anon(write_len);
	if (!buf)
		return 11;
	fill_pages(buf, write_len, 8);
	res->bad_pages = check_pages(buf, write_len, 8);
	res->error = pages_per_node(buf, write_len, res->on_node);
	return 0;
}

static void demotion_cleanup(void)
{
	if (saved_zrm[0])
		write_text(ZONE_RECLAIM_MODE, saved_zrm);
	if (saved_demotion[0])
		write_text(DEMOTION_ENABLED, saved_demotion);
	saved_zrm[0] = saved_demotion[0] = 0;
	pmem_leave();
}

static enum tt_result demotion_body(void)
{
	long long d0, oom0, node0 = node_total(0);
	const char *why;
	pid_t pid;
	int rc;

	why = pmem_join();
	TT_EXPECT(!why, "%s", why);
	TT_EXPECT(read_text(DEMOTION_ENABLED, saved_demotion, sizeof(saved_demotion)) > 0 &&
		  read_text(ZONE_RECLAIM_MODE, saved_zrm, sizeof(saved_zrm)) > 0,
		  "cannot read the demotion switches");
	TT_EXPECT(write_text(DEMOTION_ENABLED, "0") == 0, "cannot turn demotion_enabled off");
	TT_EXPECT(write_ll(ZONE_RECLAIM_MODE, RECLAIM_MIGRATE) == 0 &&
		  read_ll(ZONE_RECLAIM_MODE) == RECLAIM_MIGRATE,
		  "vm.zone_reclaim_mode does not take 8");

	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	TT_EXPECT(res != MAP_FAILED, "mmap");
	memset(res, 0, sizeof(*res));
	write_len = (size_t)(node0 * 4 / 3) & ~(page_size - 1);
	d0 = vmstat_prefix("pgdemote_");
	oom0 = vmstat("oom_kill");
	tt_diag("writing %zu MB from a task bound to node0 (%lld MB), node1 the PMEM (%lld MB)",
		write_len / MB, MBS(node0), MBS(node_total(1)));
	pid = spawn_in(NULL, bound_writer, NULL);
	rc = wait_child(pid);
	tt_diag("pgdemote +%lld, node0 %ld MB, node1 %ld MB, oom_kill +%lld",
		vmstat_prefix("pgdemote_") - d0, res->on_node[0] * page_size / MB,
		res->on_node[1] * page_size / MB, vmstat("oom_kill") - oom0);
	TT_EXPECT(rc == 0, "the bound writer exited with %d", rc);
	TT_EXPECT(vmstat("oom_kill") == oom0, "something was OOM-killed");
	TT_EXPECT(res->error == 0, "move_pages status query failed");
	TT_EXPECT(res->bad_pages == 0, "%zu pages lost their contents", res->bad_pages);
	TT_EXPECT(vmstat_prefix("pgdemote_") > d0, "no page was demoted");
	TT_EXPECT(res->on_node[1] * page_size >= (long long)write_len - node0,
		  "only %ld MB on node1", res->on_node[1] * page_size / MB);
	return TT_PASS;
}
TT_WITH_CLEANUP(test_demotion, demotion_body(), demotion_cleanup)

/* ---- 2: v1 usage through the PMEM coming and going ----------------------- */

static void usage_cleanup(void)
{
	child_stop(&churner, true);
	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	cg_destroy_free(&cg);
	pmem_leave();
}

/* The top-tier nodes' share of hierarchical_total, in bytes. */
static long long numa_toptier(void)
{
	long long sum = 0;

	for (int node = 0; node < TT_MAX_NODES; node++) {
		long long pages;

		if (tier_of_node(node) < 0 || tier_of_node(node) != tier_of_node(0))
			continue;
		pages = cg1_numa_stat(cg, "hierarchical_total", node);
		if (pages == LLONG_MIN)
			return LLONG_MIN;
		sum += pages * page_size;
	}
	return sum;
}

/*
 * The usage against numa_stat, with the churner held still; the statistics
 * are flushed lazily, so they may take a moment to agree.
 */
static bool usage_exact(const char *step, long long want)
{
	double deadline = now_s() + SETTLE_S;
	long long usage, numa;
	bool ok;

	if (churner > 0)
		kill(churner, SIGSTOP);
	do {
		usage = cg_read_ll(cg, USAGE);
		numa = numa_toptier();
		ok = usage >= 0 && numa >= 0 && llabs(usage - numa) <= TOL &&
		     (want < 0 || llabs(usage - want) <= TOL);
	} while (!ok && now_s() < deadline && !usleep(50 * 1000));
	if (churner > 0)
		kill(churner, SIGCONT);
	tt_diag("%s: toptier usage %lld MB, numa_stat %lld MB", step, MBS(usage), MBS(numa));
	return ok;
}

static enum tt_result usage_body(void)
{
	const char *why;
	char label[64];
	int n;

	TT_EXPECT(tiers_wait(1, 5), "premise: more than one tier");
	cg = cg_create(cg1_root(), "tt_pmem_v1");
	TT_EXPECT(cg, "cannot create the cgroup");
	holders[0] = holder_start(cg, 48 * MB, 1, false);
	holders[1] = holder_start(cg, 32 * MB, 2, false);
	TT_EXPECT(holders[0] && holders[1], "no holders");
	TT_EXPECT(usage_exact("one tier, 80 MB", 80 * (long long)MB),
		  "the usage is off with one tier");

	why = pmem_join();
	TT_EXPECT(!why, "%s", why);
	TT_EXPECT(holder_move(holders[1], 1) == 0, "cannot move 32 MB to node1");
	TT_EXPECT(usage_exact("PMEM joined, 32 MB moved to it", 48 * (long long)MB),
		  "the usage is off with the PMEM a second tier");

	churner = spawn_in(cg, churn_anon, NULL);
	TT_EXPECT(churner > 0, "no churner");
	while (node_online_blocks(1) > 0) {
		TT_EXPECT(node_blocks_set_some(1, "offline", 1, &n) == 0,
			  "a block of node1 would not go offline");
		snprintf(label, sizeof(label), "%d of node1's blocks left", node_online_blocks(1));
		TT_EXPECT(usage_exact(label, -1), "the usage is off with %s", label);
	}
	TT_EXPECT(tiers_wait(1, 10) && pmem_from_kmem() == 0, "the PMEM did not go away");
	TT_EXPECT(waitpid(churner, NULL, WNOHANG) == 0, "the churner died while node1 went away");
	child_stop(&churner, true);
	TT_EXPECT(usage_exact("PMEM gone, 80 MB on node0", 80 * (long long)MB),
		  "the usage is off after the PMEM went away");
	TT_EXPECT(holder_check(holders[0]) == 0 && holder_check(holders[1]) == 0,
		  "contents changed");

	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	TT_EXPECT(usage_exact("all freed", 0), "the usage does not go back to zero");
	return TT_PASS;
}
TT_WITH_CLEANUP(test_usage, usage_body(), usage_cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "demotion_in_lieu_of_discard_into_pmem_by_zone_reclaim_mode_bit_8",
		  test_demotion },
		{ "toptier_usage_exact_while_pmem_joins_and_leaves_under_load", test_usage },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

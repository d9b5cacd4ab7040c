// SPDX-License-Identifier: GPL-2.0
/*
 * Scenarios for "make demo", run inside the guest with live numbers:
 *   tierdemo demote   a task bound to node0 writes more than node0 holds;
 *                     reclaim demotes the overflow to node1
 *   tierdemo promote  a hot region placed on node1 is promoted by NUMA
 *                     balancing (numa_balancing=2); a cold one stays
 *   tierdemo share    cgroup v2: a protected cgroup (memory.tiers.low), a
 *                     capped one (memory.tiers.max) and a greedy neighbour
 *                     bound to node0 share the top tier: the fastest memory
 *                     tier, whose line of the memory.tiers.* files counts it
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt.h"

static void show_nodes(const char *what, const char *buf, size_t len)
{
	long c[TT_MAX_NODES];

	pages_per_node(buf, len, c);
	printf("  %-8s node0 %5ld MB  node1 %5ld MB | free node0 %4lld MB node1 %4lld MB"
	       " | pgdemote %lld pgpromote %lld\n", what,
	       c[0] * page_size / MB, c[1] * page_size / MB,
	       node_free(0) / (long long)MB, node_free(1) / (long long)MB,
	       vmstat_prefix("pgdemote_"), vmstat("pgpromote_success"));
	fflush(stdout);
}

static int demote(void)
{
	size_t len = (node_total(0) * 4 / 3) & ~(page_size - 1), step = 64 * MB;
	char *buf;

	write_text("/sys/kernel/mm/numa/demotion_enabled", "1");
	printf("demotion in lieu of discard: writing %zu MB bound to node0 (%lld MB), no swap\n",
	       len / MB, node_total(0) / (long long)MB);
	if (bind_to_node(0) || !(buf = map_anon(len)))
		return 1;
	for (size_t off = 0; off < len; off += step) {
		size_t n = len - off < step ? len - off : step;

		fill_pages(buf + off, n, off / page_size);
		if ((off / step) % 3 == 2)
			show_nodes("written", buf, off + n);
	}
	show_nodes("final", buf, len);
	for (size_t off = 0; off < len; off += step) {
		size_t n = len - off < step ? len - off : step;

		if (check_pages(buf + off, n, off / page_size)) {
			printf("  contents damaged!\n");
			return 1;
		}
	}
	printf("  contents intact: every page checked\n");
	return 0;
}

static int promote(void)
{
	size_t len = 64 * MB;
	char *hot = map_anon(len), *cold = map_anon(len);
	double t0;

	printf("promotion: hot and cold 64 MB regions on node1, numa_balancing=2\n");
	place_on_node(hot, len, 1);
	place_on_node(cold, len, 1);
	fill_pages(hot, len, 1);
	fill_pages(cold, len, 2);
	reset_policy(hot, len);
	reset_policy(cold, len);
	write_text("/proc/sys/kernel/numa_balancing", "2");
	show_nodes("hot", hot, len);
	t0 = now_s();
	for (double next = t0 + 1; now_s() < t0 + 20;) {
		long c[TT_MAX_NODES];

		touch_pages(hot, len);
		if (now_s() < next)
			continue;
		next += 1;
		printf("  t=%4.1fs", now_s() - t0);
		show_nodes("hot", hot, len);
		pages_per_node(hot, len, c);
		if (c[0] * 10 >= (long)(len / page_size) * 9)
			break;
	}
	show_nodes("cold", cold, len);
	write_text("/proc/sys/kernel/numa_balancing", "0");
	return 0;
}

/* The greedy neighbour: bound to node0, it presses on the top tier. */
static int greedy_writer(void *arg)
{
	size_t len = *(const size_t *)arg;
	char *buf;

	if (bind_to_node(0) || !(buf = map_anon(len)))
		return 1;
	fill_pages(buf, len, 3);
	sleep(3);	/* let the last line of numbers show it still there */
	return 0;
}

static void show_share(const char *const *cgs, const char *const *names, int n, int top,
		       double t0)
{
	printf("  t=%4.1fs", now_s() - t0);
	for (int i = 0; i < n; i++)
		printf(" | %s %4lld MB", names[i],
		       cg_tier_read(cgs[i], "memory.tiers.current", top) / (long long)MB);
	printf(" | node0 free %4lld MB\n", node_free(0) / (long long)MB);
}

static int share(void)
{
	static const char *const names[] = { "protected", "capped", "greedy" };
	size_t greedy_len = node_total(0) * 5 / 4;
	struct tt_tier tiers[TT_MAX_TIERS];
	const char *cgs[3];
	struct holder *prot, *cap;
	pid_t pid;
	double t0;
	int status, top;

	/* The top tier's line: the fastest tier's key (memory_tierN). */
	if (!cg2_root() || tiers_read(tiers, TT_MAX_TIERS) < 2) {
		printf("share: needs cgroup v2 and at least two memory tiers\n");
		return 1;
	}
	top = tiers[0].key;
	for (int i = 0; i < 3; i++)
		if (!(cgs[i] = cg_create(cg2_root(), names[i])))
			return 1;
	write_text("/sys/kernel/mm/numa/demotion_enabled", "1");
	if (cg_tier_write(cgs[0], "memory.tiers.low", top, "300M") ||
	    cg_tier_write(cgs[1], "memory.tiers.max", top, "128M")) {
		printf("share: cannot set memory.tiers.low or .max for tier %d\n", top);
		for (int i = 0; i < 3; i++)
			cg_destroy(cgs[i]);
		return 1;
	}
	printf("sharing the top tier (memory_tier%d): protected (memory.tiers.low \"%d 300M\")\n"
	       "holds 256 MB, capped (memory.tiers.max \"%d 128M\") holds 400 MB, then greedy\n"
	       "(no limits, bound to node0) writes %zu MB\n",
	       top, top, top, greedy_len / MB);
	t0 = now_s();
	prot = holder_start(cgs[0], 256 * MB, 1, false);
	cap = holder_start(cgs[1], 400 * MB, 2, false);
	if (!prot || !cap)
		return 1;
	show_share(cgs, names, 3, top, t0);
	fflush(stdout);
	pid = spawn_in(cgs[2], greedy_writer, &greedy_len);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		show_share(cgs, names, 3, top, t0);
		sleep(1);
	}
	show_share(cgs, names, 3, top, t0);
	printf("  events: protected low %lld; capped max %lld; contents %s\n",
	       cg_tier_event(cgs[0], top, "low"), cg_tier_event(cgs[1], top, "max"),
	       holder_check(prot) == 0 && holder_check(cap) == 0 ? "intact" : "DAMAGED");
	holder_stop(prot);
	holder_stop(cap);
	for (int i = 0; i < 3; i++)
		cg_destroy(cgs[i]);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	if (argc > 1 && !strcmp(argv[1], "demote")) {
		pid_t pid = fork();

		if (!pid)
			_exit(demote());
		return wait_child(pid);
	}
	if (argc > 1 && !strcmp(argv[1], "promote"))
		return promote();
	if (argc > 1 && !strcmp(argv[1], "share"))
		return share();
	fprintf(stderr, "usage: tierdemo demote|promote|share\n");
	return 2;
}

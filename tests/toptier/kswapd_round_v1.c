// SPDX-License-Identifier: GPL-2.0
/*
 * kswapd's top-tier round is bounded, and ordinary balancing keeps its turn.
 *
 * Cgroup A (v1) is over its top-tier soft limit and keeps allocating, but
 * none of its pages can move: they are mlocked.  Each round of node0's
 * kswapd finds A over its limit, demotes nothing, and A's own charges put
 * it back in the tree.  Meanwhile B, in another cgroup, bound to node0,
 * allocates more than node0 has free, which takes ordinary reclaim (B's
 * own older pages demoted to node1).  B must get all of its memory in
 * bounded time, kswapd must run balance_pgdat() (pageoutrun grows), and,
 * with A still at it, kswapd0 must not spin: it backs off from a round
 * that moved nothing.  On the classic LRU and on MGLRU.
 *
 * Under `make stress` (toptier.stress_seconds=N on the kernel command
 * line), B's part repeats for N seconds: B frees its memory and takes it
 * again, each time within the deadline, A allocating all along.
 *
 * toptier-test: topology=2tier timeout=300 debug=yes
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tt.h"

#define SOFT		"memory.toptier_soft_limit_in_bytes"
#define LRU_GEN		"/sys/kernel/mm/lru_gen/enabled"
#define DEMOTION	"/sys/kernel/mm/numa/demotion_enabled"
#define CHUNK		(4 * MB)
#define B_SIZE		(512 * MB)
#define B_DEADLINE_S	120
#define WINDOW_S	10
#define MBS(x)		((x) / (long long)MB)

struct shared {
	volatile int a_ready, a_stop, b_done;
	volatile long a_loops;
	size_t a_size;
};

static struct shared *sh;
static pid_t pid_a = -1, pid_b = -1;
static char *cg_a, *cg_b;
static char demotion_saved[16];

static void cleanup(void)
{
	if (sh)
		sh->a_stop = 1;
	if (pid_a > 0)
		wait_child(pid_a);
	if (pid_b > 0) {
		kill(pid_b, SIGKILL);
		wait_child(pid_b);
	}
	pid_a = pid_b = -1;
	if (cg_a) {
		cg_destroy(cg_a);
		free(cg_a);
		cg_a = NULL;
	}
	if (cg_b) {
		cg_destroy(cg_b);
		free(cg_b);
		cg_b = NULL;
	}
	if (demotion_saved[0])
		write_text(DEMOTION, demotion_saved[0] == 't' ? "1" : "0");
	demotion_saved[0] = 0;
	tt_restore_mglru();
	if (sh)
		memset((void *)sh, 0, sizeof(*sh));
}

/* toptier.stress_seconds=N from the kernel command line, or 0. */
static long stress_seconds(void)
{
	char buf[1024], *p;

	if (read_text("/proc/cmdline", buf, sizeof(buf)) <= 0 ||
	    !(p = strstr(buf, "toptier.stress_seconds=")))
		return 0;
	return strtol(p + strlen("toptier.stress_seconds="), NULL, 10);
}

/* A: hold a_size locked on node0, then map and unmap locked chunks. */
static int run_a(void *arg)
{
	char *p;

	(void)arg;
	if (bind_to_node(0))
		return 1;
	p = mmap(NULL, sh->a_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	sh->a_ready = 1;
	while (!sh->a_stop) {
		char *c = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED | MAP_POPULATE, -1, 0);

		if (c == MAP_FAILED)
			return 3;
		munmap(c, CHUNK);
		sh->a_loops++;
	}
	return 0;
}

/* B: write B_SIZE bound to node0, then wait to be killed. */
static int run_b(void *arg)
{
	char *p;

	(void)arg;
	if (bind_to_node(0))
		return 1;
	p = mmap(NULL, B_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	for (size_t off = 0; off < B_SIZE; off += page_size)
		p[off] = 1;
	sh->b_done = 1;
	pause();
	return 0;
}

/* CPU time of kswapd0 in seconds, or -1. */
static double kswapd0_cpu_s(void)
{
	static pid_t pid;
	char path[300], buf[1024], *p;
	unsigned long long utime, stime;

	if (!pid) {
		DIR *dir = opendir("/proc");
		struct dirent *d;

		while (dir && (d = readdir(dir))) {
			char comm[32];

			snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
			if (read_text(path, comm, sizeof(comm)) > 0 && !strcmp(comm, "kswapd0\n")) {
				pid = atoi(d->d_name);
				break;
			}
		}
		if (dir)
			closedir(dir);
		if (!pid)
			return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_text(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return -1;
	/* After the comm: state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime. */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &utime, &stime) != 2)
		return -1;
	return (double)(utime + stime) / sysconf(_SC_CLK_TCK);
}

static void node0_free(long long *free, long long *wmark)
{
	node_free_toptier_wmark(0, free, wmark);
}

static bool wait_flag(volatile int *flag, double secs)
{
	double deadline = now_s() + secs;

	while (!*flag && now_s() < deadline)
		usleep(20 * 1000);
	return *flag;
}

static enum tt_result round_body(bool mglru)
{
	long long free, wmark, runs0, runs1;
	double t0, cpu0, cpu1, end;
	long loops0, cycles = 0;

	TT_EXPECT(cg1_root(), "no cgroup v1 memory hierarchy");
	if (mglru && !path_exists(LRU_GEN)) {
		tt_skip_reason("no %s: kernel without MGLRU", LRU_GEN);
		return TT_SKIP;
	}
	if (path_exists(LRU_GEN))
		TT_EXPECT(tt_set_mglru(mglru) == 0, "cannot turn MGLRU %s", mglru ? "on" : "off");
	TT_EXPECT(read_text(DEMOTION, demotion_saved, sizeof(demotion_saved)) > 0 &&
		  write_text(DEMOTION, "1") == 0, "cannot turn demotion on");
	cg_a = cg_create(cg1_root(), "tt_round_a");
	cg_b = cg_create(cg1_root(), "tt_round_b");
	TT_EXPECT(cg_a && cg_b, "cannot create the cgroups");
	TT_EXPECT(cg_write(cg_a, SOFT, "16M") == 0, "cannot set A's soft limit");

	/* A leaves node0 half way between its toptier watermark and empty. */
	node0_free(&free, &wmark);
	TT_EXPECT(wmark > 0 && free > wmark, "premise: node0 free %lld MB, toptier watermark %lld MB",
		  MBS(free), MBS(wmark));
	sh->a_size = (size_t)(free - wmark / 2) / page_size * page_size;
	pid_a = spawn_in(cg_a, run_a, NULL);
	TT_EXPECT(pid_a > 0 && wait_flag(&sh->a_ready, 60), "A did not lock its %lld MB",
		  MBS((long long)sh->a_size));
	node0_free(&free, &wmark);
	tt_diag("A holds %lld MB locked; node0 free %lld MB, toptier watermark %lld MB",
		MBS((long long)sh->a_size), MBS(free), MBS(wmark));

	/* B needs ordinary reclaim on node0 to get its memory, every time. */
	end = now_s() + stress_seconds();
	do {
		if (pid_b > 0) {
			kill(pid_b, SIGKILL);
			wait_child(pid_b);
			sh->b_done = 0;
		}
		runs0 = vmstat("pageoutrun");
		t0 = now_s();
		pid_b = spawn_in(cg_b, run_b, NULL);
		TT_EXPECT(pid_b > 0, "cannot start B");
		TT_EXPECT(wait_flag(&sh->b_done, B_DEADLINE_S),
			  "B did not get %lld MB bound to node0 in %d s (cycle %ld)",
			  MBS(B_SIZE), B_DEADLINE_S, cycles);
		runs1 = vmstat("pageoutrun");
		tt_diag("B got %lld MB in %.1f s; balance_pgdat ran %lld times", MBS(B_SIZE),
			now_s() - t0, runs1 - runs0);
		TT_EXPECT(runs1 > runs0, "kswapd never ran balance_pgdat() while B needed it");
		cycles++;
	} while (now_s() < end);

	/* A still over its limit and allocating: kswapd must not spin. */
	loops0 = sh->a_loops;
	cpu0 = kswapd0_cpu_s();
	t0 = now_s();
	TT_EXPECT(cpu0 >= 0, "cannot read kswapd0's CPU time");
	while (now_s() < t0 + WINDOW_S)
		usleep(100 * 1000);
	cpu1 = kswapd0_cpu_s();
	node0_free(&free, &wmark);
	tt_diag("over %.1f s: A mapped %ld more locked chunks, kswapd0 used %.2f s of CPU; "
		"node0 free %lld MB, toptier watermark %lld MB", now_s() - t0, sh->a_loops - loops0,
		cpu1 - cpu0, MBS(free), MBS(wmark));
	TT_EXPECT(sh->a_loops - loops0 > 10, "premise: A stopped allocating");
	TT_EXPECT(free < wmark, "premise: node0 is not below its toptier watermark");
	TT_EXPECT(cpu1 - cpu0 < WINDOW_S / 4.0, "kswapd0 spun: %.2f s of CPU in %d s",
		  cpu1 - cpu0, WINDOW_S);
	return TT_PASS;
}
TT_WITH_CLEANUP(test_round_classic, round_body(false), cleanup)
TT_WITH_CLEANUP(test_round_mglru, round_body(true), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "kswapd_top_tier_round_is_bounded_classic_lru", test_round_classic },
		{ "kswapd_top_tier_round_is_bounded_mglru", test_round_mglru },
	};

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	return tt_run(cases, ARRAY_SIZE(cases));
}

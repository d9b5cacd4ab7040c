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
 * The third case makes A's pages movable and the lower tier full instead:
 * a filler takes node1 down to near its high watermark, and the first
 * demotions take it below its low one.  After that, room comes back only
 * a little at a time, as A unmaps chunks of its own that were demoted:
 * kswapd0 must not keep demoting into it without a pause (with node1
 * filled to 96 MB above high it did, at 28% of a CPU on the normal kernel
 * and all of one on the debug kernel, until a round that leaves the lower
 * tier full backed off).  B's ordinary reclaim then has only clean page
 * cache to take on node0 (its own direct reclaim may do it, so pageoutrun
 * is not asserted here): each time, B reads the scratch disk (128 MB, kept
 * open by the test: the last close of a block device drops its page
 * cache) before it allocates up to 32 MB more than node0 has free once A
 * is in place (A's first demotions leave more free there than A's size
 * alone would say).
 *
 * On the debug kernel kswapd0's CPU time in the window is printed, not
 * bounded (see the end of round_body()); B's deadline and the rest hold.
 *
 * Under `make stress` (toptier.stress_seconds=N on the kernel command
 * line), B's part repeats for N seconds: B frees its memory and takes it
 * again, each time within the deadline, A allocating all along.
 *
 * toptier-test: topology=2tier timeout=900 debug=yes disk_kbps=1024
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#define CHUNK		(4 * MB)
#define B_SIZE		(256 * MB)	/* several times what node0 has free once A is in */
#define B_OVER_FREE	(32 * (long long)MB)	/* with node1 full: taken from B's page cache, */
#define B_CACHE_SLACK	(16 * (long long)MB)	/* leaving at least this much of it */
/*
 * Left free on node1 above its high watermark by the filler, which takes
 * node1's memory a MB at a time and looks at the free count as it goes:
 * the per-CPU page lists keep pages the free count no longer shows (53 MB
 * on node1 of the debug guest once), and a filler sized from the free
 * count beforehand was OOM-killed.
 */
#define NODE1_SLACK	(16 * (long long)MB)
#define DISK		"/dev/vda"
#define B_DEADLINE_S	240	/* the debug kernel beside a guest and a build: 56 s */
#define WINDOW_S	10
#define QUIET_DEADLINE_S 60
#define MBS(x)		((x) / (long long)MB)

struct shared {
	volatile int a_ready, a_stop, b_done;
	volatile long a_loops;
	size_t a_size, b_size;
	bool a_movable, b_reads_disk;
};

static struct shared *sh;
static pid_t pid_a = -1, pid_b = -1;
static char *cg_a, *cg_b;
static pid_t pid_filler = -1;
/* Held open: the last close of a block device drops its page cache. */
static int disk_fd = -1;

static void cleanup(void)
{
	if (sh)
		sh->a_stop = 1;
	child_stop(&pid_a, false);
	child_stop(&pid_b, true);
	child_stop(&pid_filler, true);
	if (disk_fd >= 0)
		close(disk_fd);
	disk_fd = -1;
	cg_destroy_free(&cg_a);
	cg_destroy_free(&cg_b);
	tt_restore_demotion();
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

/* A: hold a_size on node0, then map and unmap chunks; locked unless movable. */
static int run_a(void *arg)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE |
		    (sh->a_movable ? 0 : MAP_LOCKED);
	char *p;

	(void)arg;
	if (bind_to_node(0))
		return 1;
	p = mmap(NULL, sh->a_size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	/*
	 * Locked chunks only prefer node0: bound there, with node0 full of
	 * locked pages, a chunk could OOM-kill A (it did, in one run of a
	 * few on MGLRU) and end the case before its window.
	 */
	if (!sh->a_movable && prefer_node(0))
		return 4;
	sh->a_ready = 1;
	while (!sh->a_stop) {
		char *c = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, flags, -1, 0);

		if (c == MAP_FAILED)
			return 3;
		munmap(c, CHUNK);
		sh->a_loops++;
	}
	return 0;
}

/* Bound to node0: read the whole disk, its page cache left on node0. */
static int read_disk(void *arg)
{
	static char buf[1 << 20];
	int fd;

	(void)arg;
	if (bind_to_node(0))
		return 1;
	fd = open(DISK, O_RDONLY);
	if (fd < 0)
		return 2;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return 0;
}

/* B: write b_size bound to node0 (after reading the disk), then wait to be killed. */
static int run_b(void *arg)
{
	char *p;

	if (sh->b_reads_disk && read_disk(arg))
		return 3;
	if (bind_to_node(0))
		return 1;
	p = mmap(NULL, sh->b_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	for (size_t off = 0; off < sh->b_size; off += page_size)
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

	if (pid <= 0 && (pid = kswapd_pid(0)) < 0)
		return -1;
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

/*
 * Wait until kswapd's ordinary reclaim (pgscan_kswapd) has not moved for a
 * second, up to @deadline seconds; the seconds waited.
 */
static double wait_ordinary_balancing_quiet(double deadline)
{
	double t0 = now_s(), since = t0;
	long long scan = vmstat("pgscan_kswapd");

	while (now_s() < t0 + deadline && now_s() < since + 1.0) {
		long long now = vmstat("pgscan_kswapd");

		if (now != scan) {
			scan = now;
			since = now_s();
		}
		usleep(100 * 1000);
	}
	return now_s() - t0;
}

/* Where a task is in the kernel, one diagnostic line per frame. */
static void show_stack(const char *who, pid_t pid)
{
	char path[64], buf[2048];

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	if (pid <= 0 || read_text(path, buf, sizeof(buf)) <= 0)
		return;
	for (char *f = strtok(buf, "\n"); f; f = strtok(NULL, "\n"))
		tt_diag("%s: %s", who, f);
}

static const char *const reclaim_counters[] = {
	"pageoutrun", "pgscan_kswapd", "pgsteal_kswapd", "pgscan_direct",
	"pgsteal_direct", "pgdemote_kswapd", "pgdemote_direct", "allocstall_movable",
	"kswapd_low_wmark_hit_quickly", "kswapd_high_wmark_hit_quickly",
	"pgmigrate_fail", "compact_stall",
};
#define NR_RECLAIM_COUNTERS ARRAY_SIZE(reclaim_counters)

static void read_reclaim_counters(long long *v)
{
	for (size_t i = 0; i < NR_RECLAIM_COUNTERS; i++)
		v[i] = vmstat(reclaim_counters[i]);
}

/* What B and kswapd0 are doing while B waits for its memory. */
static void show_waiting_b(void)
{
	long long free, wmark, f1, high1, v[NR_RECLAIM_COUNTERS];

	node0_free(&free, &wmark);
	node_free_wmark(1, TT_WMARK_HIGH, &f1, &high1);
	tt_diag("node0 free %lld MB; node1 free %lld MB, high %lld MB", MBS(free), MBS(f1),
		MBS(high1));
	read_reclaim_counters(v);
	for (size_t i = 0; i < NR_RECLAIM_COUNTERS; i++)
		tt_diag("%s %lld", reclaim_counters[i], v[i]);
	show_stack("B", pid_b);
	show_stack("kswapd0", kswapd_pid(0));
}

/*
 * Where kswapd0 spends a window: its innermost frames, sampled every 100 ms,
 * the distinct ones counted; printed when kswapd0 used too much CPU.
 */
#define STACK_KINDS	8
struct stack_samples {
	char top[STACK_KINDS][160];
	int count[STACK_KINDS], other, asleep;
};

static void sample_kswapd0(struct stack_samples *ss)
{
	char path[64], buf[2048], key[160], *nl;
	size_t len;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stack", kswapd_pid(0));
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return;
	/* Two innermost frames name what it does better than one. */
	nl = strchr(buf, '\n');
	if (nl && strchr(nl + 1, '\n'))
		*strchr(nl + 1, '\n') = '\0';
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = '|';
	len = strnlen(buf, sizeof(key) - 1);
	memcpy(key, buf, len);
	key[len] = '\0';
	/* Asleep: in kswapd_try_to_sleep(), inlined into kswapd() or not. */
	if (strstr(key, "kswapd_try_to_sleep") || !strncmp(key, "[<0>] kswapd+", 13)) {
		ss->asleep++;
		return;
	}
	for (i = 0; i < STACK_KINDS && ss->top[i][0]; i++)
		if (!strcmp(ss->top[i], key))
			break;
	if (i == STACK_KINDS) {
		ss->other++;
		return;
	}
	if (!ss->top[i][0])
		memcpy(ss->top[i], key, sizeof(key));
	ss->count[i]++;
}

static void show_window(const struct stack_samples *ss, bool stacks, const long long *v0,
			const long long *v1)
{
	char line[512] = "";
	size_t len = 0;

	for (size_t i = 0; i < NR_RECLAIM_COUNTERS && len < sizeof(line); i++)
		if (v1[i] != v0[i])
			len += snprintf(line + len, sizeof(line) - len, " %s +%lld",
					reclaim_counters[i], v1[i] - v0[i]);
	tt_diag("in the window:%s", len ? line : " no reclaim counter moved");
	if (!stacks)
		return;
	tt_diag("kswapd0 stack samples: %d asleep, %d elsewhere", ss->asleep, ss->other);
	for (int i = 0; i < STACK_KINDS && ss->top[i][0]; i++)
		tt_diag("  %3d %s", ss->count[i], ss->top[i]);
}

static enum tt_result round_body(bool mglru, bool lower_full)
{
	long long free, wmark, runs0, runs1, f1, high1, min1;
	long long v0[NR_RECLAIM_COUNTERS], v1[NR_RECLAIM_COUNTERS];
	struct stack_samples samples = {};
	double quiet_s, spin_s;
	double t0, cpu0, cpu1, end;
	long loops0, cycles = 0;

	TT_EXPECT(cg1_root(), "no cgroup v1 memory hierarchy");
	if (mglru && !path_exists(LRU_GEN)) {
		tt_skip_reason("no %s: kernel without MGLRU", LRU_GEN);
		return TT_SKIP;
	}
	if (path_exists(LRU_GEN))
		TT_EXPECT(tt_set_mglru(mglru) == 0, "cannot turn MGLRU %s", mglru ? "on" : "off");
	TT_EXPECT(tt_set_demotion(true) == 0, "cannot turn demotion on");
	cg_a = cg_create(cg1_root(), "tt_round_a");
	cg_b = cg_create(cg1_root(), "tt_round_b");
	TT_EXPECT(cg_a && cg_b, "cannot create the cgroups");
	TT_EXPECT(cg_write(cg_a, SOFT, "16M") == 0, "cannot set A's soft limit");
	sh->a_movable = sh->b_reads_disk = lower_full;
	sh->b_size = B_SIZE;
	if (lower_full) {
		disk_fd = open(DISK, O_RDONLY | O_CLOEXEC);
		TT_EXPECT(disk_fd >= 0, "cannot open %s: %s", DISK, strerror(errno));
		/*
		 * node1 down to NODE1_SLACK above its high watermark, with
		 * memory no one can move (there is no swap): A's first
		 * demotions take the rest.  About 2 GB at first-touch speed:
		 * 120 s is plenty on the normal kernel; the debug kernel
		 * beside a kernel build once ran out of it (a cold make
		 * check, 2026-12-07).
		 */
		pid_filler = node_filler_start(NULL, 1, TT_WMARK_HIGH, -NODE1_SLACK,
					       tt_debug_kernel() ? 600 : 120);
		TT_EXPECT(pid_filler > 0, "cannot fill node1");
		node_free_wmark(1, TT_WMARK_HIGH, &f1, &high1);
		tt_diag("node1 filled: %lld MB free, high watermark %lld MB", MBS(f1), MBS(high1));
		/* B's page cache, before A takes node0's free memory. */
		TT_EXPECT(wait_child(spawn_in(cg_b, read_disk, NULL)) == 0, "cannot read %s",
			  DISK);
	}

	/* A leaves node0 half way between its toptier watermark and empty. */
	node0_free(&free, &wmark);
	TT_EXPECT(wmark > 0 && free > wmark, "premise: node0 free %lld MB, toptier watermark %lld MB",
		  MBS(free), MBS(wmark));
	sh->a_size = (size_t)(free - wmark / 2) / page_size * page_size;
	pid_a = spawn_in(cg_a, run_a, NULL);
	TT_EXPECT(pid_a > 0 && wait_flag(&sh->a_ready, 60), "A did not map its %lld MB",
		  MBS((long long)sh->a_size));
	node0_free(&free, &wmark);
	tt_diag("A holds %lld MB %s; node0 free %lld MB, toptier watermark %lld MB",
		MBS((long long)sh->a_size), lower_full ? "movable" : "locked", MBS(free),
		MBS(wmark));
	/*
	 * B must need reclaim on node0, whatever A's demotions freed there,
	 * and only as much as node0's page cache can give (node1 is full and
	 * there is no swap), beyond the min watermark.
	 */
	if (lower_full) {
		long long file = node_file(0), min0, over;

		node_free_wmark(0, TT_WMARK_MIN, &f1, &min0);
		over = file - min0 - B_CACHE_SLACK;
		over = over < B_OVER_FREE ? over : B_OVER_FREE;
		tt_diag("node0 page cache %lld MB, min watermark %lld MB: B needs %lld MB of it",
			MBS(file), MBS(min0), MBS(over));
		TT_EXPECT(over >= B_OVER_FREE / 4, "premise: node0 has only %lld MB of page cache",
			  MBS(file));
		sh->b_size = (size_t)(free + over) / page_size * page_size;
	}
	TT_EXPECT((long long)sh->b_size > free, "premise: B's %lld MB fit in node0's free %lld MB",
		  MBS((long long)sh->b_size), MBS(free));

	/* B needs ordinary reclaim on node0 to get its memory, every time. */
	end = now_s() + stress_seconds();
	do {
		child_stop(&pid_b, true);
		sh->b_done = 0;
		runs0 = vmstat("pageoutrun");
		t0 = now_s();
		pid_b = spawn_in(cg_b, run_b, NULL);
		TT_EXPECT(pid_b > 0, "cannot start B");
		if (!wait_flag(&sh->b_done, B_DEADLINE_S))
			show_waiting_b();
		TT_EXPECT(sh->b_done,
			  "B did not get %lld MB bound to node0 in %d s (cycle %ld)",
			  MBS((long long)sh->b_size), B_DEADLINE_S, cycles);
		runs1 = vmstat("pageoutrun");
		tt_diag("B got %lld MB in %.1f s; balance_pgdat ran %lld times",
			MBS((long long)sh->b_size), now_s() - t0, runs1 - runs0);
		/*
		 * With A's pages locked, every round finds A over its limit:
		 * the bound is what gives balance_pgdat() its turn.  With
		 * node1 full, rounds back off, and B's own direct reclaim of
		 * its page cache may serve it before kswapd is needed.
		 */
		TT_EXPECT(lower_full || runs1 > runs0,
			  "kswapd never ran balance_pgdat() while B needed it");
		cycles++;
	} while (now_s() < end);

	/*
	 * A still over its limit and allocating: kswapd must not spin.  First
	 * let ordinary balancing catch up with B (pgscan_kswapd counts only
	 * it, never the cgroup reclaim of the top-tier rounds): on the debug
	 * kernel it took several seconds of kswapd0's CPU after B, which is
	 * not what the window is about.
	 */
	quiet_s = wait_ordinary_balancing_quiet(QUIET_DEADLINE_S);
	/*
	 * A spin is all of a CPU: 10.05 and 11.27 s in this window before
	 * rounds were bounded, 9.97 s with node1 full on the debug kernel.
	 * With A's pages locked, A's churn keeps node0 at its low watermark
	 * and ordinary balancing busy, which cost up to 3.45 s on the debug
	 * kernel beside another guest; with node1 full, nothing should.
	 */
	spin_s = lower_full ? WINDOW_S / 4.0 : WINDOW_S / 2.0;
	tt_diag("ordinary balancing quiet after %.1f s", quiet_s);
	loops0 = sh->a_loops;
	read_reclaim_counters(v0);
	cpu0 = kswapd0_cpu_s();
	t0 = now_s();
	TT_EXPECT(cpu0 >= 0, "cannot read kswapd0's CPU time");
	while (now_s() < t0 + WINDOW_S) {
		usleep(100 * 1000);
		sample_kswapd0(&samples);
	}
	cpu1 = kswapd0_cpu_s();
	read_reclaim_counters(v1);
	show_window(&samples, cpu1 - cpu0 >= spin_s, v0, v1);
	node0_free(&free, &wmark);
	tt_diag("over %.1f s: A mapped %ld more chunks, kswapd0 used %.2f s of CPU; "
		"node0 free %lld MB, toptier watermark %lld MB", now_s() - t0, sh->a_loops - loops0,
		cpu1 - cpu0, MBS(free), MBS(wmark));
	TT_EXPECT(sh->a_loops - loops0 > 10, "premise: A stopped allocating");
	TT_EXPECT(free < wmark, "premise: node0 is not below its toptier watermark");
	if (lower_full) {
		node_free_wmark(1, TT_WMARK_HIGH, &f1, &high1);
		node_free_wmark(1, TT_WMARK_MIN, &f1, &min1);
		tt_diag("node1 free %lld MB, min %lld MB, high %lld MB", MBS(f1), MBS(min1),
			MBS(high1));
		TT_EXPECT(f1 < high1, "premise: node1 has room (%lld MB free, high watermark "
			  "%lld MB)", MBS(f1), MBS(high1));
	}
	/*
	 * On the debug kernel the CPU time is reported, not bounded: all that
	 * kswapd0 does costs several times more there.  With A's pages
	 * locked, A's churn kept ordinary balancing busy for up to 4.40 s of
	 * the 5 s allowed; with node1 full, room that A's own frees give back
	 * lets a round through after each one-second back-off, as designed,
	 * and the window took 6.18 s (3257 pages demoted) in one run, 0.04 s
	 * in another.  The normal kernel keeps both bounds.
	 */
	if (tt_debug_kernel()) {
		tt_diag("debug kernel: kswapd0's CPU time is not bounded here");
		return TT_PASS;
	}
	TT_EXPECT(cpu1 - cpu0 < spin_s, "kswapd0 spun: %.2f s of CPU in %d s",
		  cpu1 - cpu0, WINDOW_S);
	return TT_PASS;
}
TT_WITH_CLEANUP(test_round_classic, round_body(false, false), cleanup)
TT_WITH_CLEANUP(test_round_mglru, round_body(true, false), cleanup)
TT_WITH_CLEANUP(test_round_lower_full, round_body(false, true), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "kswapd_top_tier_round_is_bounded_classic_lru", test_round_classic },
		{ "kswapd_top_tier_round_is_bounded_mglru", test_round_mglru },
		{ "kswapd_top_tier_round_lower_tier_full", test_round_lower_full },
	};

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	return tt_run(cases, ARRAY_SIZE(cases));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A demote-only pass never waits for writeback.
 *
 * Cgroup A (v1) has 24 MB of a block device's page cache under writeback
 * on node0, written to a scratch disk whose writes QEMU throttles to
 * 128 kB/s (the 24 MB take over three minutes to reach it), and 48 MB of
 * anonymous memory beside it.  With node0 below its toptier watermark, A
 * gets a soft limit 32 MB below its usage, which only the anonymous pages
 * can meet: pages under writeback cannot move.  Cgroup v1 reclaim is
 * where stock reclaim sleeps on a folio it finds under writeback a second
 * time (writeback_throttling_sane() is false there), until that write
 * completes: seconds on this disk.  kswapd0 must bring A to its limit
 * while most of the writeback is still in flight, and must never be seen
 * in folio_wait_writeback(): its stack is sampled every 10 ms throughout.
 * On the classic LRU and on MGLRU.
 *
 * A task keeps the disk open until the guest powers off: the last close of
 * a block device writes back and waits for all of it (bdev_release()),
 * which on this disk would take minutes.
 *
 * toptier-test: topology=2tier timeout=300 debug=yes disk_kbps=128
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tt.h"

#define SOFT		"memory.toptier_soft_limit_in_bytes"
#define USAGE		"memory.toptier_usage_in_bytes"
#define LRU_GEN		"/sys/kernel/mm/lru_gen/enabled"
#define DISK		"/dev/vda"
#define WB_SIZE		(24 * (long long)MB)
#define ANON_SIZE	(48 * (long long)MB)
#define EXCESS		(32 * (long long)MB)
#define BELOW_WMARK	(24 * (long long)MB)
#define ENFORCE_S	120
#define MBS(x)		((x) / (long long)MB)

struct shared {
	volatile int stop, writer_done;
	volatile long samples, seen_stacks, waits;
	char wait_stack[2048];
};

static struct shared *sh;
static struct holder *anon;
static pid_t sampler = -1, writer = -1, filler = -1;
static char *cga, *cgb;
static int cases_run;

static void cleanup(void)
{
	if (sh)
		sh->stop = 1;
	child_stop(&sampler, false);
	child_stop(&writer, true);
	child_stop(&filler, true);
	holder_stop(anon);
	anon = NULL;
	unbind();
	cg_destroy_free(&cga);
	cg_destroy_free(&cgb);
	tt_restore_demotion();
	tt_restore_mglru();
	if (sh)
		memset((void *)sh, 0, sizeof(*sh));
}

/*
 * In A, bound to node0: write WB_SIZE of the disk through the page cache
 * at the offset given, then start writeback of all of it without waiting.
 */
static int run_writer(void *arg)
{
	off_t base = *(off_t *)arg;
	static char buf[1 << 20];
	int fd;

	if (bind_to_node(0))
		return 1;
	fd = open(DISK, O_RDWR);
	if (fd < 0)
		return 2;
	for (off_t off = 0; off < WB_SIZE; off += sizeof(buf)) {
		memset(buf, (int)(off / sizeof(buf)) + 1, sizeof(buf));
		if (pwrite(fd, buf, sizeof(buf), base + off) != (ssize_t)sizeof(buf))
			return 3;
	}
	if (sync_file_range(fd, base, WB_SIZE, SYNC_FILE_RANGE_WRITE))
		return 4;
	sh->writer_done = 1;
	pause();
	return 0;
}

/*
 * Hold the disk open for good, so that no writer's close is the last.  Not
 * the test's output, though: the guest resets as soon as the test has
 * ended, and only the last close of the serial port waits for what was
 * written to it to go out.  Holding it open here lost the end marker.
 */
static int keep_disk_open(void *arg)
{
	int null = open("/dev/null", O_RDWR);

	(void)arg;
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 ||
	    dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0)
		return 1;
	if (null > STDERR_FILENO)
		close(null);
	if (open(DISK, O_RDONLY) < 0)
		return 1;
	for (;;)
		pause();
}

/* Sample kswapd0's kernel stack until told to stop. */
static int run_sampler(void *arg)
{
	char path[64], buf[2048];
	pid_t pid = *(pid_t *)arg;

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	while (!sh->stop) {
		if (read_text(path, buf, sizeof(buf)) > 0) {
			sh->seen_stacks++;
			if (strstr(buf, "folio_wait_writeback") && !sh->waits++)
				memcpy(sh->wait_stack, buf, sizeof(buf));
		}
		sh->samples++;
		usleep(10 * 1000);	/* the sampling interval */
	}
	return 0;
}

static enum tt_result writeback_body(bool mglru)
{
	long long free, wmark, usage, limit, wb0, wb1;
	off_t base = cases_run++ * 2 * WB_SIZE;
	double deadline, t0;
	pid_t kswapd;
	char val[32];

	TT_EXPECT(cg1_root(), "no cgroup v1 memory hierarchy");
	if (mglru && !path_exists(LRU_GEN)) {
		tt_skip_reason("no %s: kernel without MGLRU", LRU_GEN);
		return TT_SKIP;
	}
	if (path_exists(LRU_GEN))
		TT_EXPECT(tt_set_mglru(mglru) == 0, "cannot turn MGLRU %s", mglru ? "on" : "off");
	TT_EXPECT(path_exists(DISK), "no %s: the guest has no scratch disk", DISK);
	TT_EXPECT(tt_set_demotion(true) == 0, "cannot turn demotion on");
	kswapd = kswapd_pid(0);
	TT_EXPECT(kswapd > 0, "no kswapd0");
	cga = cg_create(cg1_root(), "tt_writeback_a");
	cgb = cg_create(cg1_root(), "tt_writeback_b");
	TT_EXPECT(cga && cgb, "cannot create the cgroups");

	/* The page cache first: the oldest pages, where reclaim starts. */
	writer = spawn_in(cga, run_writer, &base);
	TT_EXPECT(writer > 0, "cannot start the writer");
	for (deadline = now_s() + 60; !sh->writer_done && now_s() < deadline;)
		usleep(20 * 1000);	/* poll interval */
	TT_EXPECT(sh->writer_done, "the writer did not get %lld MB under writeback in 60 s",
		  MBS(WB_SIZE));
	TT_EXPECT(bind_to_node(0) == 0, "cannot bind to node0");
	anon = holder_start(cga, ANON_SIZE, 1, false);
	unbind();
	TT_EXPECT(anon, "no anonymous memory for A");
	wb0 = cg_read_key(cga, "memory.stat", "writeback");
	TT_EXPECT(wb0 >= WB_SIZE * 3 / 4, "premise: only %lld MB of A under writeback",
		  MBS(wb0));

	/* node0 below its toptier watermark. */
	filler = node_filler_start(cgb, 0, TT_WMARK_TOPTIER, BELOW_WMARK, 120);
	TT_EXPECT(filler > 0, "cannot fill node0 to %lld MB below its toptier watermark",
		  MBS(BELOW_WMARK));
	node_free_toptier_wmark(0, &free, &wmark);
	TT_EXPECT(free < wmark, "premise: node0 free %lld MB, toptier watermark %lld MB",
		  MBS(free), MBS(wmark));

	sampler = spawn_in(NULL, run_sampler, &kswapd);
	TT_EXPECT(sampler > 0, "cannot start the sampler");
	usage = cg_read_ll(cga, USAGE);
	limit = usage - EXCESS;
	snprintf(val, sizeof(val), "%lld", limit);
	TT_EXPECT(cg_write(cga, SOFT, val) == 0, "cannot set A's soft limit");
	t0 = now_s();
	touch_node(0);
	deadline = t0 + ENFORCE_S;
	while ((usage = cg_read_ll(cga, USAGE)) > limit + (long long)MB && now_s() < deadline)
		usleep(100 * 1000);	/* poll interval */
	wb1 = cg_read_key(cga, "memory.stat", "writeback");
	sh->stop = 1;
	child_stop(&sampler, false);
	tt_diag("A: %lld MB to its limit in %.1f s, %lld of %lld MB still under writeback; "
		"%ld stack samples of kswapd0, %ld in folio_wait_writeback()",
		MBS(EXCESS), now_s() - t0, MBS(wb1), MBS(wb0), sh->samples, sh->waits);
	if (sh->waits) {
		/* One diagnostic line per frame. */
		for (char *f = strtok(sh->wait_stack, "\n"); f; f = strtok(NULL, "\n"))
			tt_diag("kswapd0 waiting: %s", f);
	}
	TT_EXPECT(sh->seen_stacks > 0, "premise: cannot read kswapd0's stack");
	TT_EXPECT(sh->waits == 0, "kswapd0 was seen waiting on writeback %ld times", sh->waits);
	TT_EXPECT(usage <= limit + (long long)MB, "A's top-tier usage still %lld MB over its limit "
		  "after %d s", MBS(usage - limit), ENFORCE_S);
	TT_EXPECT(wb1 >= wb0 / 2, "premise: the writeback drained (%lld of %lld MB left) before "
		  "A reached its limit", MBS(wb1), MBS(wb0));
	TT_EXPECT(holder_check(anon) == 0, "A's anonymous memory changed");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_classic, writeback_body(false), cleanup)
TT_WITH_CLEANUP(test_mglru, writeback_body(true), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "demote_skips_writeback_classic_lru", test_classic },
		{ "demote_skips_writeback_mglru", test_mglru },
	};

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	if (path_exists(DISK) && spawn_in(NULL, keep_disk_open, NULL) < 0)
		return 1;
	return tt_run(cases, ARRAY_SIZE(cases));
}

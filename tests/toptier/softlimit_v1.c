// SPDX-License-Identifier: GPL-2.0
/*
 * memory.toptier_soft_limit_in_bytes (cgroup v1): parsed like the other v1
 * limit files, unlimited by default, absent on the root.  Enforced by
 * node0's kswapd once node0's free memory is below its toptier watermark:
 * it demotes the pages of cgroups over their limit to node1, and only
 * theirs, until they are back at it.  It never swaps, works with demotion
 * in reclaim disabled and on both the classic LRU and MGLRU.  While node0
 * is above the watermark nothing happens.
 *
 * toptier-test: topology=2tier timeout=600
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#define SOFT		"memory.toptier_soft_limit_in_bytes"
#define DEMOTION	"/sys/kernel/mm/numa/demotion_enabled"
#define LRU_GEN		"/sys/kernel/mm/lru_gen/enabled"
#define TOL		(16LL * (long long)MB)
#define ENFORCE_S	120
#define MB_OF(x)	((x) / (long long)MB)

/* What v1 limit files read when unlimited: PAGE_COUNTER_MAX pages. */
static long long unlimited(void)
{
	return LLONG_MAX / page_size * page_size;
}

/* ---- what each case leaves behind, undone by cleanup() -------------------- */
static struct holder *ha, *hb;
static int mglru_saved = -1;

static char *mkcg(const char *name)
{
	return tt_cgroup(cg1_root(), name);
}

static int mglru_on(void)
{
	long long caps = read_ll(LRU_GEN);

	return caps == LLONG_MIN ? -1 : (int)(caps & 1);	/* bit 0: LRU_GEN_CORE */
}

static int set_mglru(bool on)
{
	if (mglru_saved < 0)
		mglru_saved = mglru_on();
	if (write_text(LRU_GEN, on ? "y" : "n"))
		return -1;
	return mglru_on() == on ? 0 : -1;
}

static void cleanup(void)
{
	holder_stop(ha);
	holder_stop(hb);
	ha = hb = NULL;
	tt_release_all();
	if (mglru_saved >= 0)
		write_text(LRU_GEN, mglru_saved ? "y" : "n");
	tt_restore_demotion();
	mglru_saved = -1;
}

/* ---- helpers ---------------------------------------------------------------- */
static bool swap_off(void)
{
	char buf[256];

	/* Only the header line: no swap device. */
	return read_text("/proc/swaps", buf, sizeof(buf)) >= 0 && !strchr(strchr(buf, '\n') + 1, '\n');
}

static long long on_node0(struct holder *h)
{
	long counts[TT_MAX_NODES];

	return holder_count(h, counts) ? -1 : counts[0] * page_size;
}

static void node0_wmark(long long *free, long long *wmark)
{
	node_free_toptier_wmark(0, free, wmark);
}

static void show_state(const char *step)
{
	long long free, wmark;

	node0_wmark(&free, &wmark);
	tt_diag("%s: A %lld MB on node0, B %lld MB; node0 free %lld MB, toptier watermark %lld MB",
		step, ha ? MB_OF(on_node0(ha)) : -1, hb ? MB_OF(on_node0(hb)) : -1,
		MB_OF(free), MB_OF(wmark));
}

/* ---- the interface ---------------------------------------------------------- */
static enum tt_result test_root_has_none(void)
{
	char path[256];

	TT_EXPECT(cg1_root(), "no cgroup v1 memory hierarchy");
	snprintf(path, sizeof(path), "%s/%s", cg1_root(), SOFT);
	TT_EXPECT(!path_exists(path), "the root cgroup has %s", SOFT);
	return TT_PASS;
}

static enum tt_result interface_body(void)
{
	const struct {
		const char *in;
		long long want;
	} good[] = {
		{ "1G", 1LL << 30 },
		{ "512M", 512LL << 20 },
		{ "64K", 64LL << 10 },
		{ "3G\n", 3LL << 30 },			/* as echo writes it */
		{ "1234567", 1234567 / page_size * page_size },	/* rounded down to pages */
		{ "-1", unlimited() },
	};
	/* "\n" is what echo "" writes; a zero-length write never reaches the file. */
	static const char *const bad[] = { "abc", "12Q", "\n" };
	char *cg = mkcg("tt_iface");
	long long v;

	TT_EXPECT(cg, "cannot create the cgroup");
	v = cg_read_ll(cg, SOFT);
	TT_EXPECT(v != LLONG_MIN, "no readable %s", SOFT);
	TT_EXPECT(v == cg_read_ll(cg, "memory.limit_in_bytes") && v == unlimited(),
		  "default %lld, want unlimited %lld", v, unlimited());
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		int err = cg_write(cg, SOFT, good[i].in);

		TT_EXPECT(err == 0, "writing \"%s\": %s", good[i].in, strerror(-err));
		v = cg_read_ll(cg, SOFT);
		TT_EXPECT(v == good[i].want, "\"%s\" reads back as %lld, want %lld",
			  good[i].in, v, good[i].want);
	}
	TT_EXPECT(cg_write(cg, SOFT, "512M") == 0, "writing 512M failed");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *shown = bad[i][0] == '\n' ? "\\n" : bad[i];
		int err = cg_write(cg, SOFT, bad[i]);

		TT_EXPECT(err == -EINVAL, "writing \"%s\" gave %s, want EINVAL", shown,
			  err ? strerror(-err) : "success");
		TT_EXPECT(cg_read_ll(cg, SOFT) == 512LL << 20, "after \"%s\" the limit is %lld",
			  shown, cg_read_ll(cg, SOFT));
	}
	/* A separate limit: the other limit files are untouched. */
	TT_EXPECT(cg_read_ll(cg, "memory.limit_in_bytes") == unlimited(),
		  "memory.limit_in_bytes changed");
	TT_EXPECT(cg_read_ll(cg, "memory.soft_limit_in_bytes") == unlimited(),
		  "memory.soft_limit_in_bytes changed");
	return TT_PASS;
}

/* ---- enforcement ------------------------------------------------------------ */
/* Until A's node0 share stops changing for a second (demotion may still run). */
static long long steady_on_node0(struct holder *h, double secs)
{
	double deadline = now_s() + secs;
	long long prev = on_node0(h), cur;

	for (;;) {
		sleep(1);	/* the "nothing changes" window */
		cur = on_node0(h);
		if (cur == prev || now_s() > deadline)
			return cur;
		prev = cur;
	}
}

static enum tt_result plentiful_body(void)
{
	const long long len = 400 * MB, limit = 256 * MB;
	long long d0, free, wmark, a;
	char *cga = mkcg("tt_plenty_a");
	double end;

	TT_EXPECT(cga, "cannot create the cgroup");
	TT_EXPECT(tt_set_demotion(false) == 0, "cannot disable %s", DEMOTION);
	TT_EXPECT(cg_write(cga, SOFT, "256M") == 0, "cannot set A's limit");
	d0 = vmstat_prefix("pgdemote_");
	ha = holder_start(cga, len, 1, false);
	TT_EXPECT(ha, "no holder for A");
	show_state("A allocated");
	a = on_node0(ha);
	TT_EXPECT(a >= len - TOL, "premise: only %lld MB of A on node0", MB_OF(a));
	node0_wmark(&free, &wmark);
	TT_EXPECT(wmark > 0 && free > wmark, "premise: node0 free %lld MB, watermark %lld MB",
		  MB_OF(free), MB_OF(wmark));
	/* Over its limit by 144 MB, but node0 has room: nothing may happen. */
	end = now_s() + 10;
	while (now_s() < end) {
		sleep(1);	/* observation window: asserting that nothing moves */
		a = on_node0(ha);
		TT_EXPECT(a >= len - TOL, "A dropped to %lld MB on node0 (limit %lld MB)",
			  MB_OF(a), MB_OF(limit));
	}
	show_state("after 10 s");
	TT_EXPECT(vmstat_prefix("pgdemote_") == d0, "%lld pages demoted",
		  vmstat_prefix("pgdemote_") - d0);
	TT_EXPECT(holder_check(ha) == 0, "A's contents changed");
	return TT_PASS;
}

static enum tt_result tight_body(bool mglru)
{
	const long long len = 600 * MB, limit = 256 * MB;
	long long d0, sw0, oom0, a, b0, b, usage;
	long counts[TT_MAX_NODES];
	char *cga, *cgb;
	double deadline, next_diag;

	if (mglru && !path_exists(LRU_GEN)) {
		tt_skip_reason("no %s: kernel without MGLRU", LRU_GEN);
		return TT_SKIP;
	}
	TT_EXPECT(swap_off(), "this test needs a guest without swap");
	TT_EXPECT(tt_set_demotion(false) == 0, "cannot disable %s", DEMOTION);
	if (path_exists(LRU_GEN))
		TT_EXPECT(set_mglru(mglru) == 0, "cannot turn MGLRU %s", mglru ? "on" : "off");
	cga = mkcg("tt_tight_a");
	cgb = mkcg("tt_tight_b");
	TT_EXPECT(cga && cgb, "cannot create the cgroups");
	TT_EXPECT(cg_write(cga, SOFT, "256M") == 0, "cannot set A's limit");
	d0 = vmstat_prefix("pgdemote_");
	sw0 = vmstat("pswpout");
	TT_EXPECT(sw0 != LLONG_MIN, "no pswpout in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS?)");
	oom0 = vmstat("oom_kill");

	/* Both unbound: node0 first, node1 by fallback once node0 is full. */
	ha = holder_start(cga, len, 1, false);
	TT_EXPECT(ha, "no holder for A");
	show_state("A allocated");
	hb = holder_start(cgb, len, 2, false);
	TT_EXPECT(hb, "no holder for B");
	b0 = on_node0(hb);
	TT_EXPECT(b0 >= 0, "cannot count B's pages");
	show_state("B allocated");

	deadline = now_s() + ENFORCE_S;
	next_diag = now_s() + 10;
	while ((a = on_node0(ha)) > limit + TOL && now_s() < deadline) {
		if (now_s() >= next_diag) {
			show_state("waiting");
			next_diag = now_s() + 10;
		}
		usleep(500 * 1000);	/* poll interval */
	}
	TT_EXPECT(a >= 0 && a <= limit + TOL, "A still has %lld MB on node0 after %d s",
		  MB_OF(a), ENFORCE_S);
	a = steady_on_node0(ha, 10);
	b = on_node0(hb);
	usage = cg_read_ll(cga, "memory.toptier_usage_in_bytes");
	show_state("enforced");
	tt_diag("A toptier_usage %lld MB; pgdemote +%lld, pswpout +%lld",
		MB_OF(usage), vmstat_prefix("pgdemote_") - d0, vmstat("pswpout") - sw0);
	TT_EXPECT(a >= limit - TOL, "A was demoted to %lld MB, far below its limit", MB_OF(a));
	TT_EXPECT(usage >= 0 && usage <= limit + TOL, "A's toptier usage is %lld MB", MB_OF(usage));
	TT_EXPECT(b >= b0 - TOL, "B lost node0 pages: %lld MB, had %lld MB", MB_OF(b), MB_OF(b0));
	/* Demoted, so on node1 and intact; never swapped, never OOM-killed. */
	TT_EXPECT(holder_count(ha, counts) == 0 &&
		  (counts[0] + counts[1]) * page_size >= len - (long long)MB,
		  "A's pages are not on node0 and node1");
	TT_EXPECT(holder_check(ha) == 0, "A's contents changed");
	TT_EXPECT(holder_check(hb) == 0, "B's contents changed");
	TT_EXPECT(vmstat_prefix("pgdemote_") > d0, "pgdemote_* did not grow");
	TT_EXPECT(vmstat("pswpout") == sw0, "pages were swapped out");
	TT_EXPECT(vmstat("oom_kill") == oom0, "something was OOM-killed");
	return TT_PASS;
}

static enum tt_result test_interface(void)
{
	enum tt_result r = interface_body();

	cleanup();
	return r;
}

static enum tt_result test_plentiful(void)
{
	enum tt_result r = plentiful_body();

	cleanup();
	return r;
}

static enum tt_result test_tight_classic(void)
{
	enum tt_result r = tight_body(false);

	cleanup();
	return r;
}

static enum tt_result test_tight_mglru(void)
{
	enum tt_result r = tight_body(true);

	cleanup();
	return r;
}

int main(void)
{
	static const struct tt_case cases[] = {
		{ "root_has_no_soft_limit", test_root_has_none },
		{ "limit_parsing_and_defaults", test_interface },
		/* Before any pressure: "nothing is enforced" must not see leftovers. */
		{ "plentiful_top_tier_nothing_enforced", test_plentiful },
		{ "tight_top_tier_classic_lru", test_tight_classic },
		{ "tight_top_tier_mglru", test_tight_mglru },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

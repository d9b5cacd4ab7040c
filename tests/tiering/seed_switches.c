// SPDX-License-Identifier: GPL-2.0
/*
 * The seeds' administrator switches for demotion and promotion:
 * vm.zone_reclaim_mode bit 8 (RECLAIM_MIGRATE) turns demotion on,
 * kernel.numa_balancing_hot_threshold_ms mirrors the debugfs hot threshold,
 * kernel.numa_balancing_rate_limit_mbps mirrors
 * kernel.numa_balancing_promote_rate_limit_MBps, and each node shows the
 * hot threshold NUMA balancing has adjusted to meet the rate limit.
 *
 * toptier-test: topology=2tier timeout=420 alone=yes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tt.h"

#define DEMOTION_ENABLED	"/sys/kernel/mm/numa/demotion_enabled"
#define ZONE_RECLAIM_MODE	"/proc/sys/vm/zone_reclaim_mode"
#define HOT_SYSCTL		"/proc/sys/kernel/numa_balancing_hot_threshold_ms"
#define HOT_DEBUGFS		"/sys/kernel/debug/sched/numa_balancing/hot_threshold_ms"
#define SCAN_MAX_DEBUGFS	"/sys/kernel/debug/sched/numa_balancing/scan_period_max_ms"
#define RATE_SEED		"/proc/sys/kernel/numa_balancing_rate_limit_mbps"
#define RATE_612		"/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"
#define NODE0_THRESHOLD		"/sys/devices/system/node/node0/numa_balancing_hot_threshold_ms"
#define NUMA_BALANCING		"/proc/sys/kernel/numa_balancing"

/* ---- zone_reclaim_mode bit 8 ------------------------------------------- */

struct writer_result {
	size_t bad_pages;
	long on_node1;
};

static struct writer_result *wres;

/* Bound to node0, write a third more than node0 holds. */
static int bound_writer(void *victim)
{
	size_t len = (node_total(0) * 4 / 3) & ~(page_size - 1);
	long counts[TT_MAX_NODES];
	char *buf;

	if (victim && write_text("/proc/self/oom_score_adj", "1000"))
		return 12;
	if (bind_to_node(0) || !(buf = map_anon(len)))
		return 10;
	fill_pages(buf, len, 7);
	wres->bad_pages = check_pages(buf, len, 7);
	if (pages_per_node(buf, len, counts))
		return 11;
	wres->on_node1 = counts[1];
	return 0;
}

static enum tt_result test_bit8_demotes(void)
{
	long long d0 = vmstat_prefix("pgdemote_"), oom0 = vmstat("oom_kill");
	int rc;

	wres = mmap(NULL, sizeof(*wres), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	TT_EXPECT(wres != MAP_FAILED, "mmap");
	TT_EXPECT(write_text(DEMOTION_ENABLED, "0") == 0, "cannot turn demotion_enabled off");
	TT_EXPECT(write_text(ZONE_RECLAIM_MODE, "8") == 0, "zone_reclaim_mode=8 refused");
	rc = wait_child(spawn_in(NULL, bound_writer, NULL));
	tt_diag("zone_reclaim_mode=8: status %d, pgdemote +%lld, node1 %ld MB, bad pages %zu",
		rc, vmstat_prefix("pgdemote_") - d0, wres->on_node1 * page_size / MB,
		wres->bad_pages);
	write_text(ZONE_RECLAIM_MODE, "0");
	TT_EXPECT(rc == 0 && vmstat("oom_kill") == oom0, "the writer did not survive");
	TT_EXPECT(vmstat_prefix("pgdemote_") > d0, "nothing demoted");
	TT_EXPECT(wres->on_node1 > 0, "nothing on node1");
	TT_EXPECT(wres->bad_pages == 0, "contents damaged");
	return TT_PASS;
}

static enum tt_result test_mode0_no_demotion(void)
{
	long long d0 = vmstat_prefix("pgdemote_");
	int rc;

	TT_EXPECT(write_text(DEMOTION_ENABLED, "0") == 0, "cannot turn demotion_enabled off");
	TT_EXPECT(write_text(ZONE_RECLAIM_MODE, "0") == 0, "zone_reclaim_mode=0 refused");
	rc = wait_child(spawn_in(NULL, bound_writer, "victim"));
	tt_diag("zone_reclaim_mode=0: status %d, pgdemote +%lld", rc,
		vmstat_prefix("pgdemote_") - d0);
	TT_EXPECT(vmstat_prefix("pgdemote_") == d0, "pages demoted with both switches off");
	TT_EXPECT(rc == 128 + SIGKILL, "the writer was not OOM-killed (status %d)", rc);
	return TT_PASS;
}

static enum tt_result test_mode_bits(void)
{
	/* Undefined bits are kept and ignored, as stock 6.12 does. */
	static const char *const good[] = { "1", "2", "4", "8", "15", "16", "24", "0" };
	static const char *const bad[] = { "-1", "abc", "4294967304" };

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		TT_EXPECT(write_text(ZONE_RECLAIM_MODE, good[i]) == 0, "%s refused", good[i]);
		TT_EXPECT(read_ll(ZONE_RECLAIM_MODE) == atoll(good[i]), "%s not kept", good[i]);
	}
	write_text(ZONE_RECLAIM_MODE, "8");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err = write_text(ZONE_RECLAIM_MODE, bad[i]);

		TT_EXPECT(err == -EINVAL, "%s gave %s, want EINVAL", bad[i], strerror(-err));
		TT_EXPECT(read_ll(ZONE_RECLAIM_MODE) == 8, "%s changed the mode", bad[i]);
	}
	write_text(ZONE_RECLAIM_MODE, "0");
	return TT_PASS;
}

/* ---- hot threshold and rate limit names --------------------------------- */

static enum tt_result test_hot_threshold_mirror(void)
{
	static const char *const bad[] = { "0", "60001", "-5", "abc", "" };
	long long start = read_ll(HOT_SYSCTL);

	TT_EXPECT(start != LLONG_MIN, "no %s", HOT_SYSCTL);
	TT_EXPECT(read_ll(HOT_DEBUGFS) == start, "sysctl %lld, debugfs %lld", start,
		  read_ll(HOT_DEBUGFS));
	TT_EXPECT(start == 1000, "default %lld ms, want 1000", start);
	TT_EXPECT(write_text(HOT_SYSCTL, "250") == 0, "sysctl write refused");
	TT_EXPECT(read_ll(HOT_DEBUGFS) == 250, "debugfs did not follow the sysctl");
	TT_EXPECT(write_text(HOT_DEBUGFS, "750") == 0, "debugfs write refused");
	TT_EXPECT(read_ll(HOT_SYSCTL) == 750, "the sysctl did not follow debugfs");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err = write_text(HOT_SYSCTL, bad[i][0] ? bad[i] : "\n");

		TT_EXPECT(err == -EINVAL, "'%s' gave %s, want EINVAL", bad[i], strerror(-err));
		TT_EXPECT(read_ll(HOT_SYSCTL) == 750 && read_ll(HOT_DEBUGFS) == 750,
			  "'%s' changed the threshold", bad[i]);
	}
	TT_EXPECT(write_text(HOT_SYSCTL, "1") == 0 && write_text(HOT_SYSCTL, "60000") == 0,
		  "the range ends were refused");
	write_text(HOT_SYSCTL, "1000");
	return TT_PASS;
}

static enum tt_result test_rate_limit_mirror(void)
{
	static const char *const bad[] = { "-1", "abc", "4294967296" };

	TT_EXPECT(read_ll(RATE_SEED) != LLONG_MIN, "no %s", RATE_SEED);
	TT_EXPECT(read_ll(RATE_SEED) == read_ll(RATE_612), "the two names differ");
	TT_EXPECT(read_ll(RATE_SEED) == 65536, "default %lld, want 65536", read_ll(RATE_SEED));
	TT_EXPECT(write_text(RATE_SEED, "123") == 0 && read_ll(RATE_612) == 123,
		  "the 6.12 name did not follow");
	TT_EXPECT(write_text(RATE_612, "456") == 0 && read_ll(RATE_SEED) == 456,
		  "the seed name did not follow");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err = write_text(RATE_SEED, bad[i]);

		TT_EXPECT(err == -EINVAL, "'%s' gave %s, want EINVAL", bad[i], strerror(-err));
		TT_EXPECT(read_ll(RATE_SEED) == 456 && read_ll(RATE_612) == 456,
			  "'%s' changed the limit", bad[i]);
	}
	write_text(RATE_SEED, "65536");
	return TT_PASS;
}

/* ---- the rate limit at work ----------------------------------------------- */

struct rate_job {
	size_t len;
	double window;
	double mbps, cand_mbps;
	long long th_start, th_min;
};

static char *region_on_node1(size_t len, uint64_t seed)
{
	char *buf = map_anon(len);

	if (!buf || place_on_node(buf, len, 1))
		return NULL;
	fill_pages(buf, len, seed);
	return reset_policy(buf, len) ? NULL : buf;
}

/* A fresh process per run: NUMA balancing's scan state is per task. */
static int rate_child(void *arg)
{
	struct rate_job *job = arg;
	char *hot = region_on_node1(job->len, 3);
	long long p0 = vmstat("pgpromote_success"), c0 = vmstat("pgpromote_candidate");
	double t0 = now_s(), next = 0;

	if (!hot)
		return 1;
	job->th_start = job->th_min = read_ll(NODE0_THRESHOLD);
	while (now_s() < t0 + job->window) {
		touch_pages(hot, job->len);
		if (now_s() >= next) {
			long long th = read_ll(NODE0_THRESHOLD);

			if (th < job->th_min)
				job->th_min = th;
			next = now_s() + 0.5;
		}
	}
	job->mbps = (vmstat("pgpromote_success") - p0) * page_size / (double)MB /
		    (now_s() - t0);
	job->cand_mbps = (vmstat("pgpromote_candidate") - c0) * page_size / (double)MB /
			 (now_s() - t0);
	return 0;
}

static int run_rate(struct rate_job *job)
{
	return wait_child(spawn_in(NULL, rate_child, job));
}

static enum tt_result test_rate_limit_adjusts_threshold(void)
{
	struct rate_job *job = mmap(NULL, 2 * sizeof(*job), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct rate_job *limited = &job[0], *generous = &job[1];
	const int limit = 4;
	char limit_text[16];

	TT_EXPECT(job != MAP_FAILED, "mmap");
	TT_EXPECT(path_exists(NODE0_THRESHOLD), "no %s", NODE0_THRESHOLD);
	/*
	 * 6.12 re-tunes the threshold once per scan_period_max; shorten it
	 * so a run sees several adjustments.  A page is a candidate only if
	 * its hint fault comes within the threshold of the scan that armed
	 * it; under TCG, with another guest on the host, a sweep of the
	 * region can take longer than the default second, leaving too few
	 * candidates to push the threshold down.  A 10 s threshold keeps the
	 * candidates a matter of the rate limit alone.
	 */
	TT_EXPECT(write_text(SCAN_MAX_DEBUGFS, "2000") == 0, "cannot shorten the scan period");
	TT_EXPECT(write_text(HOT_SYSCTL, "10000") == 0, "cannot set the hot threshold");
	TT_EXPECT(write_text(NUMA_BALANCING, "2") == 0, "cannot set numa_balancing=2");

	*generous = (struct rate_job){ .len = 160 * MB, .window = 8 };
	TT_EXPECT(write_text(RATE_SEED, "65536") == 0, "cannot set a generous limit");
	TT_EXPECT(run_rate(generous) == 0, "generous run failed");

	*limited = (struct rate_job){ .len = 160 * MB, .window = 16 };
	snprintf(limit_text, sizeof(limit_text), "%d", limit);
	TT_EXPECT(write_text(RATE_SEED, limit_text) == 0, "cannot set a %d MB/s limit", limit);
	TT_EXPECT(run_rate(limited) == 0, "limited run failed");
	write_text(RATE_SEED, "65536");
	write_text(HOT_SYSCTL, "1000");

	tt_diag("generous: %.1f MB/s promoted of %.1f MB/s candidates", generous->mbps,
		generous->cand_mbps);
	tt_diag("%d MB/s limit: %.1f MB/s promoted of %.1f MB/s candidates, "
		"node0 threshold %lld -> min %lld ms", limit, limited->mbps,
		limited->cand_mbps, limited->th_start, limited->th_min);
	TT_EXPECT(limited->mbps > 0, "nothing promoted under the limit");
	/* The limit counts candidates per second; allow 50% over it. */
	TT_EXPECT(limited->mbps <= limit * 1.5, "%.1f MB/s is over the limit", limited->mbps);
	TT_EXPECT(generous->mbps > limited->mbps * 1.5, "the limit made no difference");
	TT_EXPECT(limited->cand_mbps > limit * 1.1,
		  "premise: %.1f MB/s of candidates cannot push the threshold down",
		  limited->cand_mbps);
	TT_EXPECT(limited->th_min < limited->th_start,
		  "the adjusted threshold never moved from %lld ms", limited->th_start);
	return TT_PASS;
}

int main(void)
{
	static const struct tt_case cases[] = {
		{ "zone_reclaim_mode_bits", test_mode_bits },
		{ "zone_reclaim_mode_8_demotes", test_bit8_demotes },
		{ "zone_reclaim_mode_0_no_demotion", test_mode0_no_demotion },
		{ "hot_threshold_sysctl_mirrors_debugfs", test_hot_threshold_mirror },
		{ "rate_limit_names_mirror", test_rate_limit_mirror },
		{ "rate_limit_adjusts_threshold", test_rate_limit_adjusts_threshold },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Promotion of hot pages by NUMA balancing in tiering mode (upstream since
 * 6.0): numa_balancing=2 moves a hot region from node1 to node0 and leaves
 * a cold one alone; numa_balancing=0 moves nothing; the promotion rate
 * limit caps the throughput.
 *
 * toptier-test: topology=2tier timeout=300
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "tt.h"

#define NUMA_BALANCING	"/proc/sys/kernel/numa_balancing"
#define RATE_LIMIT	"/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"

/* A region filled on node1, with its policy reset so it may move. */
static char *region_on_node1(size_t len, uint64_t seed)
{
	char *buf = map_anon(len);

	if (!buf || place_on_node(buf, len, 1))
		return NULL;
	fill_pages(buf, len, seed);
	if (reset_policy(buf, len))
		return NULL;
	return buf;
}

static long on_node(const char *buf, size_t len, int node)
{
	long counts[TT_MAX_NODES];

	if (pages_per_node(buf, len, counts))
		return -1;
	return counts[node];
}

/* Keep touching buf for up to secs; stop early once want pages are on node0. */
static long keep_hot(const char *buf, size_t len, double secs, long want)
{
	double deadline = now_s() + secs, next_check = 0;
	long n0 = 0;

	while (now_s() < deadline) {
		touch_pages(buf, len);
		if (now_s() >= next_check) {
			n0 = on_node(buf, len, 0);
			if (want > 0 && n0 >= want)
				break;
			next_check = now_s() + 0.5;
		}
	}
	return on_node(buf, len, 0);
}

static enum tt_result test_hot_promoted(void)
{
	size_t len = 64 * MB;
	long npages = len / page_size, hot0, cold1;
	char *hot = region_on_node1(len, 1), *cold = region_on_node1(len, 2);
	long long p0 = vmstat("pgpromote_success");

	TT_EXPECT(hot && cold, "cannot place the regions on node1");
	TT_EXPECT(on_node(hot, len, 1) == npages, "hot region not on node1 to start");
	TT_EXPECT(write_text(NUMA_BALANCING, "2") == 0, "cannot set numa_balancing=2");
	hot0 = keep_hot(hot, len, 60, npages * 9 / 10);
	cold1 = on_node(cold, len, 1);
	tt_diag("hot on node0: %ld/%ld, cold on node1: %ld/%ld, pgpromote_success +%lld",
		hot0, npages, cold1, npages, vmstat("pgpromote_success") - p0);
	TT_EXPECT(hot0 >= npages * 9 / 10, "hot region not promoted within 60 s");
	TT_EXPECT(cold1 >= npages * 9 / 10, "cold region moved off node1");
	TT_EXPECT(vmstat("pgpromote_success") > p0, "pgpromote_success did not grow");
	TT_EXPECT(check_pages(hot, len, 1) == 0 && check_pages(cold, len, 2) == 0,
		  "contents changed");
	return TT_PASS;
}

static enum tt_result test_off_moves_nothing(void)
{
	size_t len = 64 * MB;
	long npages = len / page_size, hot0;
	char *hot = region_on_node1(len, 3);
	long long p0 = vmstat("pgpromote_success");

	TT_EXPECT(hot, "cannot place the region on node1");
	TT_EXPECT(write_text(NUMA_BALANCING, "0") == 0, "cannot set numa_balancing=0");
	/* An observation window longer than promotion takes when enabled. */
	hot0 = keep_hot(hot, len, 10, 0);
	tt_diag("hot on node0 after 10 s: %ld/%ld", hot0, npages);
	TT_EXPECT(hot0 == 0, "%ld pages moved with numa_balancing=0", hot0);
	TT_EXPECT(vmstat("pgpromote_success") == p0, "pgpromote_success grew");
	return TT_PASS;
}

struct rate_job {
	size_t len;
	double window;
	uint64_t seed;
	double mbps;
};

static int rate_child(void *arg)
{
	struct rate_job *job = arg;
	char *hot = region_on_node1(job->len, job->seed);
	long long p0 = vmstat("pgpromote_success");
	double t0 = now_s();

	if (!hot)
		return 1;
	keep_hot(hot, job->len, job->window, 0);
	job->mbps = (vmstat("pgpromote_success") - p0) * page_size / (double)MB /
		    (now_s() - t0);
	return 0;
}

/*
 * Promotion throughput in MB/s of a hot region over a window.  Each run is
 * a fresh process, so NUMA balancing's per-task scan period starts anew
 * instead of carrying the back-off of an earlier run.
 */
static double promote_rate(size_t len, double window, uint64_t seed)
{
	struct rate_job *job = mmap(NULL, sizeof(*job), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double mbps;

	if (job == MAP_FAILED)
		return -1;
	*job = (struct rate_job){ .len = len, .window = window, .seed = seed, .mbps = -1 };
	if (wait_child(spawn_in(NULL, rate_child, job)))
		return -1;
	mbps = job->mbps;
	munmap(job, sizeof(*job));
	return mbps;
}

static enum tt_result test_rate_limit(void)
{
	const int limit = 10;
	double limited, free_run;
	char val[16];

	TT_EXPECT(write_text(NUMA_BALANCING, "2") == 0, "cannot set numa_balancing=2");
	/*
	 * Unlimited first: under a low limit 6.12 also lowers the hot
	 * threshold, and it only adjusts it again a period later.
	 */
	TT_EXPECT(write_text(RATE_LIMIT, "65536") == 0, "cannot reset the rate limit");
	free_run = promote_rate(160 * MB, 8, 5);
	snprintf(val, sizeof(val), "%d", limit);
	TT_EXPECT(write_text(RATE_LIMIT, val) == 0, "cannot set the rate limit");
	limited = promote_rate(160 * MB, 8, 4);
	tt_diag("promotion over 8 s: %.1f MB/s with a %d MB/s limit, %.1f MB/s without",
		limited, limit, free_run);
	TT_EXPECT(limited > 0, "nothing promoted under the limit");
	/* The limit counts candidates per second; allow 50% over it. */
	TT_EXPECT(limited <= limit * 1.5, "%.1f MB/s exceeds the limit", limited);
	TT_EXPECT(free_run > limited * 1.5, "the limit made no difference");
	return TT_PASS;
}

int main(void)
{
	static const struct tt_case cases[] = {
		/* First, while no scan has ever run. */
		{ "numa_balancing_0_moves_nothing", test_off_moves_nothing },
		{ "hot_region_promoted_cold_stays", test_hot_promoted },
		{ "rate_limit_caps_throughput", test_rate_limit },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * memory.toptier_usage_in_bytes through swap-out and swap-in (on zram),
 * compaction and khugepaged-style collapse (MADV_COLLAPSE): at every step
 * it equals numa_stat's hierarchical_total on node0, within TOL, and
 * follows the pages (about 0 once they are all swapped out).
 *
 * toptier-test: topology=2tier timeout=300
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

#define TOL		(4 * MB)
#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"

static const char *cg;

/* Poll (5 s) until usage == numa_stat N0 and it lies within [lo, hi]. */
static bool settled(const char *step, long long lo, long long hi)
{
	double deadline = now_s() + 5;
	long long tt, n0;

	do {
		tt = cg_read_ll(cg, "memory.toptier_usage_in_bytes");
		n0 = cg1_numa_stat(cg, "hierarchical_total", 0) * page_size;
		if (tt >= 0 && llabs(tt - n0) <= TOL && tt >= lo && tt <= hi) {
			tt_diag("%s: toptier %lld MB, numa_stat N0 %lld MB", step,
				tt / (long long)MB, n0 / (long long)MB);
			return true;
		}
		usleep(100 * 1000);	/* poll interval */
	} while (now_s() < deadline);
	tt_diag("%s: toptier %lld B, numa_stat N0 %lld B, want %lld..%lld", step, tt, n0, lo, hi);
	return false;
}

static int swap_child(void *arg)
{
	size_t len = 64 * MB;
	long long in0 = vmstat("pswpin"), out0 = vmstat("pswpout");
	char *buf = map_anon(len);

	(void)arg;
	if (!buf || in0 == LLONG_MIN || out0 == LLONG_MIN)
		return 10;
	fill_pages(buf, len, 11);
	if (!settled("written", len - TOL, len + TOL))
		return 11;
	if (madvise(buf, len, MADV_PAGEOUT))
		return 12;
	tt_diag("pswpout +%lld pages", vmstat("pswpout") - out0);
	if (vmstat("pswpout") - out0 < (long long)(len / page_size) * 9 / 10)
		return 13;
	if (!settled("swapped out", 0, len / 10))
		return 14;
	if (check_pages(buf, len, 11))
		return 15;
	tt_diag("pswpin +%lld pages", vmstat("pswpin") - in0);
	if (vmstat("pswpin") == in0)
		return 16;
	if (!settled("swapped in", len - TOL, len + TOL))
		return 17;
	return 0;
}

static enum tt_result test_swap(void)
{
	enum tt_result r = TT_FAIL;
	int rc;

	TT_EXPECT(path_exists("/sys/block/zram0"), "no zram device for swap");
	TT_EXPECT(write_text("/sys/block/zram0/disksize", "256M") == 0, "zram disksize");
	TT_EXPECT(system("mkswap /dev/zram0 >/dev/null") == 0, "mkswap");
	TT_EXPECT(swapon("/dev/zram0", 0) == 0, "swapon: %s", strerror(errno));
	cg = cg_create(cg1_root(), "tt_swap");
	if (cg) {
		rc = wait_child(spawn_in(cg, swap_child, NULL));
		tt_diag("swap child status %d", rc);
		r = rc == 0 ? TT_PASS : TT_FAIL;
		cg_destroy(cg);
	}
	swapoff("/dev/zram0");
	return r;
}

static int compact_child(void *arg)
{
	size_t len = 128 * MB;
	long long moved0 = vmstat("compact_migrate_scanned");
	char *buf = map_anon(len);

	(void)arg;
	if (!buf || moved0 == LLONG_MIN)
		return 10;
	fill_pages(buf, len, 12);
	/* Free every other page, so compaction has holes to fill. */
	for (size_t off = 0; off < len; off += 2 * page_size)
		if (madvise(buf + off, page_size, MADV_DONTNEED))
			return 11;
	if (!settled("half freed", len / 2 - TOL, len / 2 + TOL))
		return 12;
	if (write_text("/proc/sys/vm/compact_memory", "1"))
		return 13;
	tt_diag("compact_migrate_scanned +%lld", vmstat("compact_migrate_scanned") - moved0);
	if (vmstat("compact_migrate_scanned") == moved0)
		return 14;
	if (!settled("compacted", len / 2 - TOL, len / 2 + TOL))
		return 15;
	for (size_t off = page_size, i = 1; off < len; off += 2 * page_size, i += 2) {
		const uint64_t *w = (const uint64_t *)(buf + off);

		(void)i;
		if (!w[0])
			return 16;	/* a kept page lost its contents */
	}
	return 0;
}

static enum tt_result test_compaction(void)
{
	int rc;

	cg = cg_create(cg1_root(), "tt_compact");
	TT_EXPECT(cg, "no cgroup");
	rc = wait_child(spawn_in(cg, compact_child, NULL));
	cg_destroy(cg);
	TT_EXPECT(rc == 0, "compaction child failed with %d", rc);
	return TT_PASS;
}

static int collapse_child(void *arg)
{
	size_t len = 16 * MB, huge = 2 * MB;
	long long c0 = vmstat("thp_collapse_alloc");
	char *raw = map_anon(len + huge), *buf;

	(void)arg;
	if (!raw || c0 == LLONG_MIN)
		return 10;
	buf = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
	/* Small pages first: THP is "madvise" and this range is not advised. */
	fill_pages(buf, len, 13);
	if (!settled("small pages", len - TOL, len + TOL))
		return 11;
	if (madvise(buf, len, MADV_COLLAPSE))
		return 12;
	tt_diag("thp_collapse_alloc +%lld", vmstat("thp_collapse_alloc") - c0);
	if (vmstat("thp_collapse_alloc") - c0 < (long long)(len / huge) / 2)
		return 13;
	if (!settled("collapsed", len - TOL, len + TOL))
		return 14;
	if (check_pages(buf, len, 13))
		return 15;
	return 0;
}

static enum tt_result test_collapse(void)
{
	int rc;

	TT_EXPECT(write_text(THP_ENABLED, "madvise") == 0, "cannot set THP to madvise");
	cg = cg_create(cg1_root(), "tt_collapse");
	TT_EXPECT(cg, "no cgroup");
	rc = wait_child(spawn_in(cg, collapse_child, NULL));
	cg_destroy(cg);
	TT_EXPECT(rc == 0, "collapse child failed with %d", rc);
	return TT_PASS;
}

int main(void)
{
	static const struct tt_case cases[] = {
		{ "swap_out_and_in", test_swap },
		{ "compaction", test_compaction },
		{ "thp_collapse", test_collapse },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

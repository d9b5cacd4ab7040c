// SPDX-License-Identifier: GPL-2.0
/*
 * A huge page collapsed into the tiers of a line of memory.tiers.max that
 * is at its limit makes room first.
 *
 * khugepaged and MADV_COLLAPSE put the huge page on the node that holds
 * most of the range's pages, and nowhere else, so the limit cannot
 * redirect it.  The pages of the range that were below the line enter it:
 * before the huge page is allocated, the cgroup demotes as many of its own
 * coldest pages out of the line's tiers.
 *
 * The case: a 2M range with 288 of its 512 pages on node0 and 224 on
 * node1, then 24M of other memory that fills node0's line up to its 16M
 * max.  MADV_COLLAPSE on the range, by a task of the cgroup, takes the
 * same path as khugepaged.  For a moment the old small pages and the huge
 * page are both charged; without room made first, the line's peak (reset
 * just before) is the usage before plus the 512 pages of the huge page;
 * with it, at least 224 pages lower, less what the CPUs' charge caches
 * held back (64 pages each).  Afterwards the range is one huge page, the
 * line is within its max, and the contents are intact.
 *
 * toptier-test: topology=2tier,3tier timeout=300
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tt.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"
#define HPAGE		(2 * MB)
#define ON_NODE0	288		/* of the range's 512 pages: a majority */
#define CAP		(16LL * (long long)MB)
#define OTHER		(24 * MB)
#define TOL		(4LL * (long long)MB)

static char *cg;
static char thp_saved[64];

static void cleanup(void)
{
	if (cg) {
		cg_destroy(cg);
		free(cg);
		cg = NULL;
	}
	if (thp_saved[0]) {
		char *l = strchr(thp_saved, '['), *r = l ? strchr(l, ']') : NULL;

		if (l && r) {
			*r = 0;
			write_text(THP_ENABLED, l + 1);
		}
		thp_saved[0] = 0;
	}
}

struct result {
	bool khugepaged;	/* collapse by khugepaged, not MADV_COLLAPSE */
	int step;
	int retries;		/* of MADV_COLLAPSE, after EAGAIN */		/* where the child stopped: 0 when it finished */
	int err;
	long long before;	/* the line right before the collapse */
	long long peak;		/* its peak from the reset to after it */
	long long after;
	long long demoted;	/* pgdemote_tierlimit over the collapse */
	long counts_before[TT_MAX_NODES];
	long counts[TT_MAX_NODES];
	long bad_pages;
};

static int key0;

#define KHUGEPAGED	"/sys/kernel/mm/transparent_hugepage/khugepaged/"

/* Is the 2M range at addr mapped by a huge page (AnonHugePages)? */
static bool range_is_huge(const char *addr)
{
	char line[256];
	bool in = false, huge = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		long kb;

		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = start <= (uintptr_t)addr && (uintptr_t)addr < end;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) {
			huge = kb >= (long)(HPAGE / 1024);
			break;
		}
	}
	fclose(f);
	return huge;
}

static int collapse_child(void *arg)
{
	struct result *r = arg;
	size_t small = (size_t)ON_NODE0 * page_size;
	char *raw, *range, *other, path[512];
	int fd;

	r->step = 1;
	raw = map_anon(2 * HPAGE);
	if (!raw)
		return 1;
	range = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(uintptr_t)(HPAGE - 1));
	/*
	 * Small pages first (THP is "never" until the collapse), on the two
	 * nodes, by the task's policy: a policy of the range would split it
	 * into VMAs too small to collapse.
	 */
	r->step = 2;
	if (bind_to_node(0))
		goto fail;
	fill_pages(range, small, 5);
	if (bind_to_node(1))
		goto fail;
	fill_pages(range + small, HPAGE - small, 7);
	if (unbind())
		goto fail;

	/* Then the rest of node0's line fills up. */
	r->step = 3;
	other = map_anon(OTHER);
	if (!other)
		goto fail;
	fill_pages(other, OTHER, 6);
	/* The range is the hot part: the coldest pages are the others. */
	for (int i = 0; i < 8; i++)
		touch_pages(range, HPAGE);

	r->step = 4;
	if (pages_per_node(range, HPAGE, r->counts_before))
		goto fail;
	snprintf(path, sizeof(path), "%s/memory.tiers.peak", cg);
	fd = open(path, O_RDWR);
	if (fd < 0 || write(fd, "reset\n", 6) != 6)
		goto fail;
	r->before = cg_tier_read(cg, "memory.tiers.current", key0);
	r->demoted = cg_read_key(cg, "memory.stat", "pgdemote_tierlimit");
	r->step = 5;
	if (r->khugepaged) {
		double deadline = now_s() + 60;

		/* khugepaged starts with the first VM_HUGEPAGE mm, at once. */
		if (write_text(THP_ENABLED, "madvise") || madvise(range, HPAGE, MADV_HUGEPAGE))
			goto fail;
		while (!range_is_huge(range) && now_s() < deadline)
			usleep(20 * 1000);
	} else {
		/* EAGAIN is a page that was busy for a moment: try again. */
		while (madvise(range, HPAGE, MADV_COLLAPSE)) {
			if (errno != EAGAIN || ++r->retries >= 10)
				goto fail;
		}
	}
	if (!range_is_huge(range)) {
		errno = ETIMEDOUT;
		goto fail;
	}
	r->peak = fd_tier_read(fd, key0);
	close(fd);
	r->after = cg_tier_read(cg, "memory.tiers.current", key0);
	r->demoted = cg_read_key(cg, "memory.stat", "pgdemote_tierlimit") - r->demoted;
	r->step = 6;
	r->bad_pages = check_pages(range, small, 5) +
		       check_pages(range + small, HPAGE - small, 7) +
		       check_pages(other, OTHER, 6);
	if (pages_per_node(range, HPAGE, r->counts))
		goto fail;
	r->step = 0;
	return 0;
fail:
	r->err = errno;
	return 1;
}

static enum tt_result collapse_body(bool khugepaged)
{
	struct result *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long long xchg;
	int rc;

	key0 = tier_of_node(0);
	TT_EXPECT(r != MAP_FAILED && key0 >= 0, "setup");
	memset(r, 0, sizeof(*r));
	r->khugepaged = khugepaged;
	TT_EXPECT(read_text(THP_ENABLED, thp_saved, sizeof(thp_saved)) > 0,
		  "no transparent huge pages (%s)", THP_ENABLED);
	TT_EXPECT(write_text(THP_ENABLED, "never") == 0, "cannot set %s", THP_ENABLED);
	TT_EXPECT(write_text(KHUGEPAGED "scan_sleep_millisecs", "10") == 0 &&
		  write_text(KHUGEPAGED "alloc_sleep_millisecs", "10") == 0,
		  "cannot speed khugepaged up");
	cg = cg_create(cg2_root(), khugepaged ? "tt_v2_khugepaged" : "tt_v2_collapse");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(cg_tier_write(cg, "memory.tiers.max", key0, "16M") == 0,
		  "cannot set memory.tiers.max");

	rc = wait_child(spawn_in(cg, collapse_child, r));
	TT_EXPECT(rc == 0, "the task stopped at step %d: %s", r->step, strerror(r->err));
	xchg = r->peak - r->before;
	tt_diag("the range before: node0 %ld, node1 %ld pages", r->counts_before[0],
		r->counts_before[1]);
	tt_diag("line %d: %lld kB before the collapse, peak %+lld kB from there, %lld kB after "
		"(max %lld kB); %lld pages demoted; huge page: node0 %ld, node1 %ld pages; "
		"%d retries", key0, r->before / 1024, xchg / 1024, r->after / 1024, CAP / 1024,
		r->demoted, r->counts[0], r->counts[1], r->retries);
	TT_EXPECT(r->counts_before[0] == ON_NODE0 &&
		  r->counts_before[1] == (long)(HPAGE / page_size) - ON_NODE0,
		  "premise: the range was not %d pages on node0 and the rest on node1", ON_NODE0);
	TT_EXPECT(r->before >= CAP - 2 * (long long)MB && r->before <= CAP,
		  "premise: the line was not at its max before the collapse (%lld kB)",
		  r->before / 1024);
	/*
	 * Where it ends up is the LRU's call: if the range's own small pages
	 * were the cgroup's coldest, they made room, and the huge page may
	 * have followed them down.  One huge page is on one node.
	 */
	TT_EXPECT(r->counts[0] == (long)(HPAGE / page_size) ||
		  r->counts[1] == (long)(HPAGE / page_size),
		  "the collapsed range is on several nodes (node0 %ld, node1 %ld pages)",
		  r->counts[0], r->counts[1]);
	TT_EXPECT(r->bad_pages == 0, "%ld pages changed", r->bad_pages);
	/* Room for 224 pages, less up to 64 cached per CPU: under 512 - 96. */
	TT_EXPECT(xchg < (512LL - 96) * (long long)page_size,
		  "the line peaked %lld kB above its usage: no room was made first",
		  xchg / 1024);
	TT_EXPECT(r->after <= CAP + TOL, "the line is %lld kB after the collapse, max %lld kB",
		  r->after / 1024, CAP / 1024);
	return TT_PASS;
}
TT_WITH_CLEANUP(test_madv_collapse, collapse_body(false), cleanup)
TT_WITH_CLEANUP(test_khugepaged, collapse_body(true), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "madv_collapse_at_max_makes_room_first", test_madv_collapse },
		{ "khugepaged_at_max_makes_room_first", test_khugepaged },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A page read back from swap is placed by the tier limits of the cgroup it
 * is charged to, the swap entry's owner, not by those of the task that
 * faults it in.
 *
 * Shared memory (a memfd) is first touched by a task in the owner cgroup,
 * swapped out with memory.reclaim, then read by a task in another,
 * unlimited cgroup.  With the owner's fastest tier at max 0 the pages must
 * come back below it; the control, in the same boot, is an unlimited owner
 * whose pages come back on node0, the reader's node.
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
#include <unistd.h>

#include "tt.h"

#define LEN		(64 * MB)
#define ZRAM		"/dev/zram0"

static char *cgroups[3];
static bool swap_on;
static int memfd = -1;

static void cleanup(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cgroups); i++) {
		if (cgroups[i])
			cg_destroy(cgroups[i]);
		free(cgroups[i]);
		cgroups[i] = NULL;
	}
	if (memfd >= 0)
		close(memfd);
	memfd = -1;
	if (swap_on)
		swapoff(ZRAM);
	swap_on = false;
}

static int touch_child(void *arg)
{
	char *buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);

	(void)arg;
	if (buf == MAP_FAILED)
		return 1;
	fill_pages(buf, LEN, 41);
	munmap(buf, LEN);
	return 0;
}

struct read_result {
	long counts[TT_MAX_NODES];
	long bad_pages;
};

/* Read every page back in, and say where they are. */
static int read_child(void *arg)
{
	struct read_result *r = arg;
	char *buf = mmap(NULL, LEN, PROT_READ, MAP_SHARED, memfd, 0);

	if (buf == MAP_FAILED)
		return 1;
	r->bad_pages = check_pages(buf, LEN, 41);
	if (pages_per_node(buf, LEN, r->counts))
		return 2;
	munmap(buf, LEN);
	return 0;
}

/*
 * Let a task in @owner write a new memfd, swap it out, read it back from
 * @reader; where did the pages land?
 */
static enum tt_result round_trip(const char *owner, const char *reader,
				 struct read_result *r)
{
	long long out0 = vmstat("pswpout"), in0 = vmstat("pswpin");
	int rc;

	memfd = memfd_create("tt_swapin", 0);
	TT_EXPECT(memfd >= 0 && ftruncate(memfd, LEN) == 0, "memfd: %s", strerror(errno));
	rc = wait_child(spawn_in(owner, touch_child, NULL));
	TT_EXPECT(rc == 0, "the owner's task failed (%d)", rc);
	/* Swap it all out: shmem has no other place to go. */
	TT_EXPECT(cg_write(owner, "memory.reclaim", "128M") == 0 ||
		  vmstat("pswpout") - out0 >= (long long)(LEN / page_size) * 9 / 10,
		  "memory.reclaim: %s", strerror(errno));
	TT_EXPECT(vmstat("pswpout") - out0 >= (long long)(LEN / page_size) * 9 / 10,
		  "only %lld pages were swapped out", vmstat("pswpout") - out0);

	memset(r, 0, sizeof(*r));
	rc = wait_child(spawn_in(reader, read_child, r));
	TT_EXPECT(rc == 0, "the reader failed (%d)", rc);
	TT_EXPECT(vmstat("pswpin") - in0 >= (long long)(LEN / page_size) * 9 / 10,
		  "only %lld pages were swapped in", vmstat("pswpin") - in0);
	TT_EXPECT(r->bad_pages == 0, "%ld pages changed", r->bad_pages);
	close(memfd);
	memfd = -1;
	return TT_PASS;
}

static enum tt_result owner_body(void)
{
	struct read_result *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long npages = LEN / page_size;
	char *capped, *free_cg, *reader;
	int key = tier_of_node(0);

	TT_EXPECT(r != MAP_FAILED && key >= 0, "setup");
	TT_EXPECT(path_exists("/sys/block/zram0"), "no zram device for swap");
	TT_EXPECT(write_text("/sys/block/zram0/disksize", "256M") == 0, "zram disksize");
	TT_EXPECT(system("mkswap " ZRAM " >/dev/null") == 0, "mkswap");
	TT_EXPECT(swapon(ZRAM, 0) == 0, "swapon: %s", strerror(errno));
	swap_on = true;

	capped = cgroups[0] = cg_create(cg2_root(), "tt_swapin_capped");
	free_cg = cgroups[1] = cg_create(cg2_root(), "tt_swapin_free");
	reader = cgroups[2] = cg_create(cg2_root(), "tt_swapin_reader");
	TT_EXPECT(capped && free_cg && reader, "cannot create the cgroups");
	TT_EXPECT(cg_tier_write(capped, "memory.tiers.max", key, "0") == 0,
		  "cannot set the owner's max to 0");

	/* The control: an unlimited owner's pages come back on the reader's node. */
	if (round_trip(free_cg, reader, r) != TT_PASS)
		return TT_FAIL;
	tt_diag("unlimited owner: node0 %ld, node1 %ld of %ld pages", r->counts[0],
		r->counts[1], npages);
	TT_EXPECT(r->counts[0] >= npages * 9 / 10,
		  "control: only %ld/%ld pages came back on node0", r->counts[0], npages);

	if (round_trip(capped, reader, r) != TT_PASS)
		return TT_FAIL;
	tt_diag("owner at max 0: node0 %ld, node1 %ld of %ld pages; owner's line %lld, "
		"reader's memory.current %lld", r->counts[0], r->counts[1], npages,
		cg_tier_read(capped, "memory.tiers.current", key),
		cg_read_ll(reader, "memory.current"));
	TT_EXPECT(r->counts[1] >= npages * 9 / 10,
		  "only %ld/%ld pages came back below the owner's max 0", r->counts[1], npages);
	TT_EXPECT(cg_read_ll(reader, "memory.current") < (long long)(LEN / 4),
		  "the reader was charged %lld bytes", cg_read_ll(reader, "memory.current"));
	munmap(r, sizeof(*r));
	return TT_PASS;
}
TT_WITH_CLEANUP(test_owner, owner_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "swapin_placed_by_swap_entry_owner", test_owner },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

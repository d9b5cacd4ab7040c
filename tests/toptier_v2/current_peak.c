// SPDX-License-Identifier: GPL-2.0
/*
 * memory.toptier.current and memory.toptier.peak (cgroup v2).
 *
 * current is a page counter that follows each folio's charge, so unlike the
 * statistics it is exact the moment a charge, an uncharge or a migration is
 * done: the cases assert it right after each step, and then poll until
 * memory.numa_stat (anon + file on node0, flushed lazily) agrees with it.
 * peak must read and reset like memory.peak.
 *
 * toptier-test: topology=2tier timeout=300
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#define CURRENT		"memory.toptier.current"
#define PEAK		"memory.toptier.peak"
#define SHMEM_FILE	"/tmp/tt-v2-shmem"	/* /tmp is a tmpfs in the guest */
/* A cgroup holds a few pages besides ours (stacks, page tables are not LRU). */
#define TOL		(4LL * (long long)MB)
#define SETTLE_S	5

static struct holder *holders[2];
static char *cgroups[6];
static int ncgroups;

static char *mkcg(const char *parent, const char *name)
{
	char *cg = cg_create(parent, name);

	if (cg && ncgroups < (int)ARRAY_SIZE(cgroups))
		cgroups[ncgroups++] = cg;
	return cg;
}

static struct holder *hold(int slot, const char *cg, size_t len, uint64_t seed)
{
	return holders[slot] = holder_start(cg, len, seed, false);
}

static void unhold(int slot)
{
	holder_stop(holders[slot]);
	holders[slot] = NULL;
}

static void cleanup(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(holders); i++)
		unhold(i);
	unlink(SHMEM_FILE);
	while (ncgroups > 0) {
		char *cg = cgroups[--ncgroups];

		cg_destroy(cg);
		free(cg);
	}
}

static long long current(const char *cg)
{
	return cg_read_ll(cg, CURRENT);
}

/* anon + file on node0 as memory.numa_stat reports them, in bytes. */
static long long numa_n0(const char *cg)
{
	long long anon = cg2_numa_stat(cg, "anon", 0), file = cg2_numa_stat(cg, "file", 0);

	return anon == LLONG_MIN || file == LLONG_MIN ? LLONG_MIN : anon + file;
}

/*
 * The counter is exact now: assert it is in [lo, hi] at once, then poll
 * (statistics are flushed lazily) until numa_stat agrees with it.
 */
static bool check_step(const char *cg, const char *step, long long lo, long long hi)
{
	long long cur = current(cg), n0 = LLONG_MIN;
	double deadline = now_s() + SETTLE_S;

	if (cur == LLONG_MIN || cur < lo || cur > hi) {
		tt_diag("%s: %s is %lld kB, want %lld..%lld kB", step, CURRENT,
			cur == LLONG_MIN ? -1 : cur / 1024, lo / 1024, hi / 1024);
		return false;
	}
	do {
		cur = current(cg);
		n0 = numa_n0(cg);
		if (n0 != LLONG_MIN && cur >= lo && cur <= hi && llabs(cur - n0) <= TOL) {
			tt_diag("%s: %s %lld kB, numa_stat anon+file N0 %lld kB", step,
				CURRENT, cur / 1024, n0 / 1024);
			return true;
		}
		usleep(100 * 1000);	/* poll interval */
	} while (now_s() < deadline);
	tt_diag("%s: %s %lld kB but numa_stat anon+file N0 %lld kB after %d s", step,
		CURRENT, cur / 1024, n0 == LLONG_MIN ? -1 : n0 / 1024, SETTLE_S);
	return false;
}

/* Read a peak file through an open descriptor (the reset is per fd). */
/* ---- cases ------------------------------------------------------------------ */
static enum tt_result files_body(void)
{
	const char *root = cg2_root();
	char path[512];
	char *cg;
	int err;

	TT_EXPECT(root, "no cgroup2 hierarchy with the memory controller");
	snprintf(path, sizeof(path), "%s/%s", root, CURRENT);
	TT_EXPECT(!path_exists(path), "%s exists on the root cgroup", CURRENT);
	snprintf(path, sizeof(path), "%s/%s", root, PEAK);
	TT_EXPECT(!path_exists(path), "%s exists on the root cgroup", PEAK);
	TT_EXPECT(cg_read_key(root, "memory.stat", "toptier") >= 0,
		  "the root's memory.stat has no toptier entry");

	cg = mkcg(root, "tt_v2_files");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(current(cg) == 0, "a new cgroup's %s is %lld", CURRENT, current(cg));
	TT_EXPECT(cg_read_ll(cg, PEAK) == 0, "a new cgroup's %s is %lld", PEAK,
		  cg_read_ll(cg, PEAK));
	TT_EXPECT(cg_read_key(cg, "memory.stat", "toptier") >= 0, "no toptier in memory.stat");
	err = cg_write(cg, CURRENT, "0");
	TT_EXPECT(err != 0, "%s accepted a write", CURRENT);
	return TT_PASS;
}

static enum tt_result anon_body(void)
{
	const long long len = 200 * MB;
	char *cg = mkcg(cg2_root(), "tt_v2_anon");
	long long peak;
	struct holder *h;

	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(check_step(cg, "empty", 0, TOL), "empty cgroup");
	h = hold(0, cg, len, 1);
	TT_EXPECT(h, "no holder");
	TT_EXPECT(check_step(cg, "allocated on node0", len - TOL, len + TOL), "after allocation");
	TT_EXPECT(cg_read_key(cg, "memory.stat", "toptier") >= len - TOL,
		  "memory.stat toptier is %lld", cg_read_key(cg, "memory.stat", "toptier"));

	TT_EXPECT(holder_move(h, 1) == 0, "move_pages to node1 failed");
	TT_EXPECT(check_step(cg, "moved to node1", 0, TOL), "after demotion");
	peak = cg_read_ll(cg, PEAK);
	TT_EXPECT(peak >= len - TOL && peak <= len + TOL, "peak %lld kB after the move, want ~%lld",
		  peak / 1024, len / 1024);

	TT_EXPECT(holder_move(h, 0) == 0, "move_pages back to node0 failed");
	TT_EXPECT(check_step(cg, "moved back", len - TOL, len + TOL), "after promotion");
	TT_EXPECT(holder_check(h) == 0, "contents changed");

	unhold(0);
	/* Exit frees the pages before the parent reaps; batches drain soon after. */
	{
		double deadline = now_s() + SETTLE_S;

		while (current(cg) > TOL && now_s() < deadline)
			usleep(100 * 1000);	/* poll interval */
	}
	TT_EXPECT(check_step(cg, "freed", 0, TOL), "after the holder exited");
	return TT_PASS;
}

static enum tt_result peak_body(void)
{
	const long long len = 128 * MB;
	char *cg = mkcg(cg2_root(), "tt_v2_peak");
	char path[512];
	int fd_reset, fd_other;
	long long v;
	struct holder *h;

	TT_EXPECT(cg, "cannot create the cgroup");
	h = hold(0, cg, len, 2);
	TT_EXPECT(h, "no holder");
	TT_EXPECT(holder_move(h, 1) == 0, "move_pages to node1 failed");
	TT_EXPECT(current(cg) <= TOL, "current %lld after moving to node1", current(cg));

	snprintf(path, sizeof(path), "%s/%s", cg, PEAK);
	fd_reset = open(path, O_RDWR);
	fd_other = open(path, O_RDWR);
	TT_EXPECT(fd_reset >= 0 && fd_other >= 0, "open %s: %s", path, strerror(errno));
	v = fd_read_ll(fd_reset);
	TT_EXPECT(v >= len - TOL, "peak %lld kB before any reset, want >= %lld", v / 1024,
		  (len - TOL) / 1024);
	TT_EXPECT(write(fd_reset, "reset\n", 6) == 6, "reset write: %s", strerror(errno));
	v = fd_read_ll(fd_reset);
	TT_EXPECT(v >= 0 && v <= TOL, "peak %lld kB right after the reset, want ~current", v / 1024);
	/* The reset is local to that descriptor, as with memory.peak. */
	v = fd_read_ll(fd_other);
	TT_EXPECT(v >= len - TOL, "another fd's peak dropped to %lld kB", v / 1024);
	TT_EXPECT(cg_read_ll(cg, PEAK) >= len - TOL, "a fresh fd's peak dropped to %lld kB",
		  cg_read_ll(cg, PEAK) / 1024);

	TT_EXPECT(holder_move(h, 0) == 0, "move_pages back to node0 failed");
	v = fd_read_ll(fd_reset);
	TT_EXPECT(v >= len - TOL && v <= len + TOL, "reset fd's peak %lld kB after moving back",
		  v / 1024);
	close(fd_reset);
	close(fd_other);
	return TT_PASS;
}

static enum tt_result tmpfs_body(void)
{
	const long long len = 64 * MB;
	char *cg = mkcg(cg2_root(), "tt_v2_tmpfs");
	int rc;

	TT_EXPECT(cg, "cannot create the cgroup");
	rc = write_file_from(cg, SHMEM_FILE, len);
	TT_EXPECT(rc == 0, "writing %s failed (%d)", SHMEM_FILE, rc);
	TT_EXPECT(check_step(cg, "tmpfs file", len - TOL, len + TOL), "tmpfs pages");
	TT_EXPECT(unlink(SHMEM_FILE) == 0, "unlink: %s", strerror(errno));
	TT_EXPECT(check_step(cg, "file removed", 0, TOL), "after unlink");
	return TT_PASS;
}

/*
 * A parent counts its children; a child removed with pages on node0 (its
 * page cache) and node1 (moved anon) leaves the parent's count exact, and
 * nothing once the pages are gone.
 */
static enum tt_result hierarchy_body(void)
{
	const long long anon = 100 * MB, file = 64 * MB;
	char *p = mkcg(cg2_root(), "tt_v2_parent");
	char *c1, *c2;
	int rc;

	TT_EXPECT(p && cg_write(p, "cgroup.subtree_control", "+memory") == 0,
		  "cannot create the parent with memory in its subtree");
	c1 = mkcg(p, "c1");
	c2 = mkcg(p, "c2");
	TT_EXPECT(c1 && c2, "cannot create the children");
	TT_EXPECT(hold(0, c1, anon, 3), "no holder in c1");
	rc = write_file_from(c2, SHMEM_FILE, file);
	TT_EXPECT(rc == 0, "writing %s from c2 failed (%d)", SHMEM_FILE, rc);
	TT_EXPECT(check_step(p, "parent", anon + file - TOL, anon + file + TOL), "parent sum");

	TT_EXPECT(holder_move(holders[0], 1) == 0, "move_pages to node1 failed");
	TT_EXPECT(check_step(c1, "c1 on node1", 0, TOL), "c1 after the move");
	TT_EXPECT(check_step(p, "parent, c1 on node1", file - TOL, file + TOL), "parent");

	/* c2's page cache outlives c2: the parent still counts it. */
	TT_EXPECT(rmdir(c2) == 0, "rmdir c2: %s", strerror(errno));
	TT_EXPECT(check_step(p, "c2 removed", file - TOL, file + TOL), "parent after rmdir c2");
	unhold(0);
	TT_EXPECT(rmdir(c1) == 0, "rmdir c1: %s", strerror(errno));
	TT_EXPECT(unlink(SHMEM_FILE) == 0, "unlink: %s", strerror(errno));
	{
		double deadline = now_s() + SETTLE_S;

		while (current(p) > TOL && now_s() < deadline)
			usleep(100 * 1000);	/* poll interval */
	}
	TT_EXPECT(check_step(p, "children gone", 0, TOL), "parent keeps a residue");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_files, files_body(), cleanup)
TT_WITH_CLEANUP(test_anon, anon_body(), cleanup)
TT_WITH_CLEANUP(test_peak, peak_body(), cleanup)
TT_WITH_CLEANUP(test_tmpfs, tmpfs_body(), cleanup)
TT_WITH_CLEANUP(test_hierarchy, hierarchy_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "files_exist_on_non_root_only", test_files },
		{ "anon_follows_migration", test_anon },
		{ "peak_reads_and_resets_like_memory_peak", test_peak },
		{ "tmpfs_page_cache", test_tmpfs },
		{ "hierarchy_and_removed_children", test_hierarchy },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

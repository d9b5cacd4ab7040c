// SPDX-License-Identifier: GPL-2.0
/*
 * memory.toptier_usage_in_bytes (cgroup v1): a cgroup's memory on top-tier
 * nodes, descendants included.  It comes from the per-node LRU statistics
 * that memory.numa_stat prints, so at every step below it must equal
 * hierarchical_total's N0 (node0 being the only top-tier node) times the
 * page size, be non-negative and not exceed memory.usage_in_bytes: anon
 * memory, its demotion and promotion with move_pages(2), tmpfs and ramfs
 * page cache, a hierarchy losing a child, a task moving between cgroups
 * and THPs being split.
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tt.h"

#define USAGE		"memory.toptier_usage_in_bytes"
#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"
#define SHMEM_FILE	"/tmp/tt-usage-shmem"	/* /tmp is a tmpfs in the guest */
#define RAMFS_DIR	"/tmp/tt-usage-ramfs"
#define RAMFS_FILE	RAMFS_DIR "/file"
/* Stat flushing is lazy and a cgroup has a few pages besides ours. */
#define TOL		(4LL * (long long)MB)
#define SETTLE_S	5

/* ---- what each case leaves behind, undone by cleanup() -------------------- */
static char thp_saved[16];




static void cleanup(void)
{
	unlink(SHMEM_FILE);
	unlink(RAMFS_FILE);
	umount(RAMFS_DIR);
	rmdir(RAMFS_DIR);
	tt_release_all();
	if (thp_saved[0]) {
		write_text(THP_ENABLED, thp_saved);
		thp_saved[0] = 0;
	}
}

/* ---- the invariant -------------------------------------------------------- */
struct snap {
	long long tt;		/* toptier_usage_in_bytes, read as signed */
	long long n0;		/* hierarchical_total N0, in bytes */
	long long usage;	/* usage_in_bytes */
};

static bool take_snap(const char *cg, struct snap *s)
{
	char path[512], buf[64];
	long long pages;

	/* Unsigned in the kernel: a wrapped counter shows up negative. */
	snprintf(path, sizeof(path), "%s/%s", cg, USAGE);
	s->tt = read_text(path, buf, sizeof(buf)) > 0 ? (long long)strtoull(buf, NULL, 10)
						       : LLONG_MIN;
	pages = cg1_numa_stat(cg, "hierarchical_total", 0);
	s->n0 = pages == LLONG_MIN ? LLONG_MIN : pages * page_size;
	s->usage = cg_read_ll(cg, "memory.usage_in_bytes");
	return s->tt != LLONG_MIN && s->n0 != LLONG_MIN && s->usage != LLONG_MIN;
}

static bool consistent(const struct snap *s)
{
	return s->tt >= 0 && llabs(s->tt - s->n0) <= TOL && s->tt <= s->usage + TOL;
}

static void show(const char *step, const char *cg, const struct snap *s)
{
	const char *name = strrchr(cg, '/') + 1;

	if (s->tt == LLONG_MIN || s->n0 == LLONG_MIN || s->usage == LLONG_MIN)
		tt_diag("%s: %s: cannot read %s, memory.numa_stat or memory.usage_in_bytes",
			step, name, USAGE);
	else
		tt_diag("%s: %s: toptier %lld kB, numa_stat N0 %lld kB, usage %lld kB",
			step, name, s->tt / 1024, s->n0 / 1024, s->usage / 1024);
}

/*
 * Poll until the invariant holds in each of the n cgroups and the sum of
 * their toptier usage is within [lo, hi]; the statistics are flushed
 * lazily, so a moment's disagreement is no failure.
 */
static bool settle_sum(const char *const *cgs, int n, const char *step,
		       long long lo, long long hi, long long *sum)
{
	double deadline = now_s() + SETTLE_S;
	struct snap s[4];
	bool ok;

	do {
		long long total = 0;

		ok = true;
		for (int i = 0; i < n; i++) {
			if (!take_snap(cgs[i], &s[i]) || !consistent(&s[i])) {
				ok = false;
				continue;
			}
			total += s[i].tt;
		}
		if (ok && total >= lo && total <= hi) {
			for (int i = 0; i < n; i++)
				show(step, cgs[i], &s[i]);
			if (sum)
				*sum = total;
			return true;
		}
		usleep(100 * 1000);	/* poll interval */
	} while (now_s() < deadline);
	for (int i = 0; i < n; i++)
		show(step, cgs[i], &s[i]);
	tt_diag("%s: %s after %d s (toptier wanted in %lld..%lld kB)", step,
		ok ? "toptier usage out of range" : "invariant broken", SETTLE_S,
		lo / 1024, hi / 1024);
	return false;
}

static bool settle(const char *cg, const char *step, long long lo, long long hi,
		   long long *tt)
{
	return settle_sum(&cg, 1, step, lo, hi, tt);
}

static long on_node(struct holder *h, int node)
{
	long counts[TT_MAX_NODES];

	return holder_count(h, counts) ? -1 : counts[node];
}

/* ---- cases ------------------------------------------------------------------ */
static enum tt_result test_root(void)
{
	const char *root = cg1_root();
	struct snap s;

	TT_EXPECT(root, "no cgroup v1 memory hierarchy");
	TT_EXPECT(take_snap(root, &s), "the root has no readable %s", USAGE);
	TT_EXPECT(settle(root, "root", 0, LLONG_MAX, NULL), "root cgroup inconsistent");
	return TT_PASS;
}

static enum tt_result anon_body(void)
{
	const long long len = 200 * MB;
	long npages = len / page_size, slack = MB / page_size;
	char *cg = tt_cgroup(cg1_root(), "tt_anon");
	struct holder *h;

	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(settle(cg, "empty", 0, TOL, NULL), "empty cgroup inconsistent");
	/* Unbound: node0 has room, so the memory is local to the CPUs. */
	h = tt_holder(cg, len, 1, false);
	TT_EXPECT(h, "no holder");
	TT_EXPECT(on_node(h, 0) == npages, "only %ld of %ld pages on node0 to start",
		  on_node(h, 0), npages);
	TT_EXPECT(settle(cg, "allocated", len - TOL, len + TOL, NULL), "after allocation");

	/* move_pages(2) may leave a busy page behind; a few do not matter. */
	TT_EXPECT(holder_move(h, 1) == 0, "move_pages to node1 failed");
	TT_EXPECT(on_node(h, 1) >= npages - slack, "%ld pages on node1", on_node(h, 1));
	TT_EXPECT(settle(cg, "moved to node1", 0, TOL, NULL), "after demotion");

	TT_EXPECT(holder_move(h, 0) == 0, "move_pages to node0 failed");
	TT_EXPECT(on_node(h, 0) >= npages - slack, "%ld pages on node0", on_node(h, 0));
	TT_EXPECT(settle(cg, "moved back", len - TOL, len + TOL, NULL), "after promotion");
	TT_EXPECT(holder_check(h) == 0, "contents changed");

	tt_holder_release(h);
	TT_EXPECT(settle(cg, "freed", 0, TOL, NULL), "after the holder exited");
	return TT_PASS;
}

static enum tt_result file_body(void)
{
	const long long shmem = 64 * MB, ram = 32 * MB;
	char *cg = tt_cgroup(cg1_root(), "tt_file");
	int rc;

	TT_EXPECT(cg, "cannot create the cgroup");
	rc = write_file_from(cg, SHMEM_FILE, shmem);
	TT_EXPECT(rc == 0, "writing %s failed (%d)", SHMEM_FILE, rc);
	TT_EXPECT(settle(cg, "tmpfs file", shmem - TOL, shmem + TOL, NULL), "tmpfs pages");

	/* ramfs: page cache on the unevictable LRU, which counts as well. */
	mkdir(RAMFS_DIR, 0755);
	TT_EXPECT(mount("ramfs", RAMFS_DIR, "ramfs", 0, NULL) == 0, "mount ramfs: %s",
		  strerror(errno));
	rc = write_file_from(cg, RAMFS_FILE, ram);
	TT_EXPECT(rc == 0, "writing %s failed (%d)", RAMFS_FILE, rc);
	TT_EXPECT(settle(cg, "tmpfs + ramfs files", shmem + ram - TOL, shmem + ram + TOL, NULL),
		  "ramfs pages");

	TT_EXPECT(unlink(SHMEM_FILE) == 0 && unlink(RAMFS_FILE) == 0, "unlink failed");
	TT_EXPECT(settle(cg, "files removed", 0, TOL, NULL), "after unlink");
	return TT_PASS;
}

static enum tt_result hierarchy_body(void)
{
	const long long len = 100 * MB;
	char *p = tt_cgroup(cg1_root(), "tt_parent");
	char *c1 = tt_cgroup(p, "c1"), *c2 = tt_cgroup(p, "c2");
	const char *kids[] = { c1, c2 };
	long long tp, tkids;
	struct holder *h2;
	double deadline;

	TT_EXPECT(p && c1 && c2, "cannot create the cgroups");
	TT_EXPECT(tt_holder(c1, len, 1, false), "no holder in c1");
	h2 = tt_holder(c2, len, 2, false);
	TT_EXPECT(h2, "no holder in c2");
	TT_EXPECT(settle(c1, "c1 allocated", len - TOL, len + TOL, NULL), "c1");
	TT_EXPECT(settle(c2, "c2 allocated", len - TOL, len + TOL, NULL), "c2");
	/* The parent has no task of its own: its usage is its children's. */
	deadline = now_s() + SETTLE_S;
	do {
		TT_EXPECT(settle(p, "parent", 2 * len - 2 * TOL, 2 * len + 2 * TOL, &tp), "parent");
		TT_EXPECT(settle_sum(kids, 2, "children", 2 * len - 2 * TOL, 2 * len + 2 * TOL,
				     &tkids), "children");
	} while (llabs(tp - tkids) > TOL && now_s() < deadline);
	TT_EXPECT(llabs(tp - tkids) <= TOL, "parent %lld kB, children %lld kB",
		  tp / 1024, tkids / 1024);

	tt_holder_release(h2);
	TT_EXPECT(cg_destroy(c2) == 0 && !path_exists(c2), "cannot remove c2");
	TT_EXPECT(settle(p, "c2 removed", tp - len - TOL, tp - len + TOL, NULL),
		  "the parent did not drop by c2's %lld MB", len / (long long)MB);
	TT_EXPECT(settle(c1, "c1 after", len - TOL, len + TOL, NULL), "c1 after c2 went");
	return TT_PASS;
}

static enum tt_result task_move_body(void)
{
	const long long len = 100 * MB;
	char *from = tt_cgroup(cg1_root(), "tt_from"), *to = tt_cgroup(cg1_root(), "tt_to");
	const char *both[] = { from, to };
	struct holder *h;

	TT_EXPECT(from && to, "cannot create the cgroups");
	h = tt_holder(from, len, 3, false);
	TT_EXPECT(h, "no holder");
	TT_EXPECT(settle(from, "before the move", len - TOL, len + TOL, NULL), "before");
	TT_EXPECT(cg_attach(to, h->pid) == 0, "cannot move the task");
	/*
	 * v1 moves no charges by default: the memory stays with the old
	 * cgroup.  Whoever owns it, the two together hold it.
	 */
	TT_EXPECT(settle_sum(both, 2, "task moved", len - TOL, len + 2 * TOL, NULL), "moved");
	/* Migration of pages charged to a cgroup their task left. */
	TT_EXPECT(holder_move(h, 1) == 0, "move_pages to node1 failed");
	TT_EXPECT(settle_sum(both, 2, "then moved to node1", 0, 2 * TOL, NULL), "on node1");
	TT_EXPECT(holder_move(h, 0) == 0, "move_pages to node0 failed");
	TT_EXPECT(settle_sum(both, 2, "and back", len - TOL, len + 2 * TOL, NULL), "back");
	TT_EXPECT(holder_check(h) == 0, "contents changed");
	return TT_PASS;
}

/* The selected mode of "always [madvise] never". */
static bool thp_mode(char *mode, size_t len)
{
	char buf[128], *a, *b = NULL;

	if (read_text(THP_ENABLED, buf, sizeof(buf)) <= 0)
		return false;
	a = strchr(buf, '[');
	if (a)
		b = strchr(a, ']');
	if (!b || (size_t)(b - a) > len)
		return false;
	memcpy(mode, a + 1, b - a - 1);
	mode[b - a - 1] = 0;
	return true;
}

static enum tt_result thp_body(void)
{
	const long long len = 64 * MB;
	char *cg, mode[16];
	struct holder *h;

	if (!path_exists(THP_ENABLED)) {
		tt_skip_reason("kernel without transparent huge pages");
		return TT_SKIP;
	}
	TT_EXPECT(thp_mode(mode, sizeof(mode)), "cannot parse %s", THP_ENABLED);
	memcpy(thp_saved, mode, sizeof(thp_saved));
	TT_EXPECT(write_text(THP_ENABLED, "always") == 0, "cannot set THP to always");
	cg = tt_cgroup(cg1_root(), "tt_thp");
	TT_EXPECT(cg, "cannot create the cgroup");
	h = tt_holder(cg, len, 4, true);
	TT_EXPECT(h, "no holder");
	tt_diag("rss_huge %lld MB of %lld MB", cg_read_key(cg, "memory.stat", "rss_huge") / (long long)MB,
		len / (long long)MB);
	TT_EXPECT(settle(cg, "THPs", len - TOL, len + TOL, NULL), "with THPs");
	/* Dropping the upper half of every huge page splits its PMD. */
	TT_EXPECT(holder_trim(h, 2 * MB, MB) == 0, "MADV_DONTNEED failed");
	TT_EXPECT(settle(cg, "THPs split", len / 2 - TOL, len + TOL, NULL), "split THPs");
	TT_EXPECT(holder_check(h) == 0, "the kept halves changed");
	TT_EXPECT(holder_trim(h, len, 0) == 0, "MADV_DONTNEED failed");
	TT_EXPECT(settle(cg, "all dropped", 0, TOL, NULL), "after dropping everything");
	return TT_PASS;
}

/* A case: its body, then cleanup() of whatever the body left, even on failure. */
#define CLEAN_CASE(body)			\
static enum tt_result body##_clean(void)	\
{						\
	enum tt_result r = body();		\
						\
	cleanup();				\
	return r;				\
}

CLEAN_CASE(anon_body)
CLEAN_CASE(file_body)
CLEAN_CASE(hierarchy_body)
CLEAN_CASE(task_move_body)
CLEAN_CASE(thp_body)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "root_cgroup_reports_usage", test_root },
		{ "anon_demoted_and_promoted", anon_body_clean },
		{ "tmpfs_and_ramfs_page_cache", file_body_clean },
		{ "parent_includes_children", hierarchy_body_clean },
		{ "task_moved_between_cgroups", task_move_body_clean },
		{ "thp_allocated_and_split", thp_body_clean },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

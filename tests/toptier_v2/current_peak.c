// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tiers.current and memory.tiers.peak (cgroup v2), and the format of
 * every memory.tiers.* file.
 *
 * Each file has one "N value" line per memory tier except the slowest,
 * fastest first, N the tier's key in /sys/devices/virtual/memory_tiering
 * (read from sysfs, never assumed), and each value is cumulative: line N is
 * about tier N and every faster tier.  current is a page counter that
 * follows each folio's charge, so unlike the statistics it is exact the
 * moment a charge, an uncharge or a migration is done: the cases assert
 * every line right after each step, and then poll until memory.numa_stat
 * (anon + file summed over the nodes of the tiers <= N, flushed lazily)
 * agrees with it.  peak must read and reset like memory.peak, line by line.
 *
 * The steps place a known amount of memory on known nodes; the line of
 * tier N must then hold what is on the nodes of tiers <= N: on 3tier
 * memory moved node0 -> node1 leaves the first line and stays in the
 * second, moved on to node2 it leaves both.
 *
 * toptier-test: topology=2tier,3tier timeout=300
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

#define CURRENT		"memory.tiers.current"
#define PEAK		"memory.tiers.peak"
#define LOW		"memory.tiers.low"
#define HIGH		"memory.tiers.high"
#define MAX		"memory.tiers.max"
#define EVENTS		"memory.tiers.events"
#define SHMEM_FILE	"/tmp/tt-v2-shmem"	/* /tmp is a tmpfs in the guest */
#define RAMFS_DIR	"/tmp/tt-v2-ramfs"	/* page cache that is not shmem */
#define RAMFS_FILE	RAMFS_DIR "/file"
#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"
/* A cgroup holds a few pages besides ours (stacks, page tables are not LRU). */
#define TOL		(4LL * (long long)MB)
#define SETTLE_S	5

static const char *const tier_files[] = { CURRENT, PEAK, LOW, HIGH, MAX, EVENTS };
static const char *const old_files[] = {
	"memory.toptier.current", "memory.toptier.peak", "memory.toptier.low",
	"memory.toptier.high", "memory.toptier.max", "memory.toptier.events",
};
static const char *const old_stat[] = {
	"toptier", "pgdemote_toptier", "pgpromote_toptier_denied", "toptier_max_fallback",
	"toptier_demote_stalled",
};
static const char *const lru_names[] = {
	"inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable",
};

static struct tt_tier tiers[TT_MAX_TIERS];
static int ntiers;	/* tiers with memory */
static int nlines;	/* lines of each file: every tier but the slowest */
static int node_tier[TT_MAX_NODES];	/* index in tiers[] of each node, or -1 */

static struct holder *holders[2];
static char thp_saved[16];
static bool ramfs_mounted;


static struct holder *hold(int slot, const char *cg, size_t len, uint64_t seed, bool thp)
{
	return holders[slot] = holder_start(cg, len, seed, thp);
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
	unlink(RAMFS_FILE);
	if (ramfs_mounted)
		umount(RAMFS_DIR);
	ramfs_mounted = false;
	rmdir(RAMFS_DIR);
	if (thp_saved[0])
		write_text(THP_ENABLED, thp_saved);
	thp_saved[0] = 0;
	tt_release_all();
}

/* The workbench's topologies: node k alone in the k-th tier. */
static bool tiers_ok(void)
{
	int want = !strcmp(topology(), "3tier") ? 3 : 2;

	if (ntiers != want) {
		tt_diag("%d memory tiers with memory on %s, want %d", ntiers, topology(), want);
		return false;
	}
	for (int i = 0; i < ntiers; i++)
		if (!tiers[i].nodes[i] || tiers[i].nnodes != 1) {
			tt_diag("memory_tier%d does not hold node%d alone", tiers[i].key, i);
			return false;
		}
	return true;
}

/*
 * One file's lines, checked to be exactly the limited tiers' keys, in
 * order; vals[] gets the values.  buf: the file's text (for messages).
 */
static bool lines_ok(const char *file, const char *buf, long long *vals)
{
	int keys[TT_MAX_TIERS], n = keyed_parse(buf, keys, vals, TT_MAX_TIERS);

	if (n != nlines) {
		tt_diag("%s: %d lines of \"N value\" (%s), want %d: \"%s\"", file, n,
			n < 0 ? strerror(-n) : "parsed", nlines, buf);
		return false;
	}
	for (int i = 0; i < nlines; i++)
		if (keys[i] != tiers[i].key) {
			tt_diag("%s: line %d has key %d, want %d (tiers fastest first): \"%s\"",
				file, i + 1, keys[i], tiers[i].key, buf);
			return false;
		}
	return true;
}

/* A cgroup's file read into vals[] (one per line), checked as lines_ok(). */
static bool read_lines(const char *cg, const char *file, long long *vals)
{
	char path[512], buf[1024];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (read_text(path, buf, sizeof(buf)) < 0) {
		tt_diag("cannot read %s", path);
		return false;
	}
	return lines_ok(file, buf, vals);
}

/* Through an open descriptor (the peak reset is per fd). */
static bool fd_read_lines(int fd, long long *vals)
{
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0) {
		tt_diag("pread %s: %s", PEAK, strerror(errno));
		return false;
	}
	buf[n] = 0;
	return lines_ok(PEAK, buf, vals);
}

/* What line i should count of per-node amounts: the nodes of tiers <= i. */
static long long expected(const long long *per_node, int line)
{
	long long sum = 0;

	for (int node = 0; node < TT_MAX_NODES; node++)
		if (node_tier[node] >= 0 && node_tier[node] <= line)
			sum += per_node[node];
	return sum;
}

/* Set per_node[] to len on node and 0 elsewhere. */
static long long *on_node(long long *per_node, int node, long long len)
{
	memset(per_node, 0, sizeof(long long) * TT_MAX_NODES);
	if (node >= 0)
		per_node[node] = len;
	return per_node;
}

static void show(char *out, size_t len, const long long *v)
{
	size_t o = 0;

	out[0] = 0;
	for (int i = 0; i < nlines && o < len; i++)
		o += snprintf(out + o, len - o, "%s%d:%lld kB", i ? ", " : "", tiers[i].key,
			      v[i] == LLONG_MIN ? -1 : v[i] / 1024);
}

/* Every line within [exp - lo_slack, exp + TOL], and not below the line before. */
static bool within(const long long *cur, const long long *per_node, long long lo_slack,
		   char *why, size_t len)
{
	char a[256];

	for (int i = 0; i < nlines; i++) {
		long long exp = expected(per_node, i);

		if (cur[i] < exp - lo_slack || cur[i] > exp + TOL || (i && cur[i] < cur[i - 1])) {
			show(a, sizeof(a), cur);
			snprintf(why, len, "line %d is %lld kB, want %lld kB (%lld..+%lld), and "
				 "cumulative: %s", tiers[i].key, cur[i] / 1024, exp / 1024,
				 -lo_slack / 1024, TOL / 1024, a);
			return false;
		}
	}
	return true;
}

/*
 * The counter is exact now: assert every line at once, then poll
 * (statistics are flushed lazily) until memory.numa_stat over the nodes of
 * each line's tiers agrees with it.  names: the numa_stat entries to sum
 * (NULL: anon and file).  lo_slack: how far below the expectation a line
 * may be (TOL, or more where the kernel may split THPs meanwhile).
 */
static bool check_step_names(const char *cg, const char *step, const long long *per_node,
			     const char *const *names, int nnames, long long lo_slack)
{
	long long cur[TT_MAX_TIERS], ref[TT_MAX_TIERS];
	double deadline = now_s() + SETTLE_S;
	char why[512], a[256], b[256];
	bool agree = false;

	if (!read_lines(cg, CURRENT, cur))
		return false;
	if (!within(cur, per_node, lo_slack, why, sizeof(why))) {
		tt_diag("%s: %s: %s", step, CURRENT, why);
		return false;
	}
	do {
		if (!read_lines(cg, CURRENT, cur))
			return false;
		agree = within(cur, per_node, lo_slack, why, sizeof(why));
		for (int i = 0; i < nlines; i++) {
			int key = tiers[i].key;

			ref[i] = names ? cg2_numa_entries_upto_tier(cg, key, names, nnames) :
					 cg2_numa_upto_tier(cg, key);
			if (ref[i] == LLONG_MIN || llabs(cur[i] - ref[i]) > TOL)
				agree = false;
		}
		if (agree)
			break;
		usleep(100 * 1000);	/* poll interval */
	} while (now_s() < deadline);
	show(a, sizeof(a), cur);
	show(b, sizeof(b), ref);
	if (agree) {
		tt_diag("%s: %s %s; numa_stat %s %s", step, CURRENT, a,
			names ? "LRU" : "anon+file", b);
		return true;
	}
	tt_diag("%s: %s %s but numa_stat %s %s after %d s", step, CURRENT, a,
		names ? "LRU" : "anon+file", b, SETTLE_S);
	return false;
}

static bool check_step(const char *cg, const char *step, const long long *per_node)
{
	return check_step_names(cg, step, per_node, NULL, 0, TOL);
}

/* Exit frees the pages before the parent reaps; batches drain soon after. */
static void wait_empty(const char *cg)
{
	double deadline = now_s() + SETTLE_S;
	long long cur[TT_MAX_TIERS];

	while (now_s() < deadline) {
		bool empty = read_lines(cg, CURRENT, cur);

		for (int i = 0; empty && i < nlines; i++)
			empty = cur[i] <= TOL;
		if (empty)
			return;
		usleep(100 * 1000);	/* poll interval */
	}
}

/* A writer of a file from inside a cgroup, its pages on one node (or unbound). */
struct writer {
	const char *path;
	size_t len;
	int node;
};

static int writer_main(void *arg)
{
	const struct writer *w = arg;
	char *buf = map_anon(MB);
	int fd;

	if (w->node >= 0 && bind_to_node(w->node))
		return 1;
	fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!buf || fd < 0)
		return 2;
	for (size_t off = 0; off < w->len; off += MB) {
		fill_pages(buf, MB, off / MB);
		if (write(fd, buf, MB) != (ssize_t)MB)
			return 3;
	}
	return close(fd) ? 4 : 0;
}

static int write_file_on(const char *cg, const char *path, size_t len, int node)
{
	struct writer w = { .path = path, .len = len, .node = node };

	return wait_child(spawn_in(cg, writer_main, &w));
}

/* ---- cases ------------------------------------------------------------------ */
static enum tt_result files_body(void)
{
	const char *root = cg2_root();
	long long vals[TT_MAX_TIERS];
	char path[512], buf[1024];
	char *cg, *line, *save;
	int n = 0, err;

	TT_EXPECT(root, "no cgroup2 hierarchy with the memory controller");
	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	cg = tt_cgroup(root, "tt_v2_files");
	TT_EXPECT(cg, "cannot create the cgroup");
	for (size_t i = 0; i < ARRAY_SIZE(tier_files); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, tier_files[i]);
		TT_EXPECT(!path_exists(path), "%s exists on the root cgroup", tier_files[i]);
		snprintf(path, sizeof(path), "%s/%s", cg, tier_files[i]);
		TT_EXPECT(path_exists(path), "a new cgroup has no %s", tier_files[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(old_files); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, old_files[i]);
		TT_EXPECT(!path_exists(path), "%s is still there on the root", old_files[i]);
		snprintf(path, sizeof(path), "%s/%s", cg, old_files[i]);
		TT_EXPECT(!path_exists(path), "%s is still there", old_files[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(old_stat); i++)
		TT_EXPECT(cg_read_key(cg, "memory.stat", old_stat[i]) == LLONG_MIN,
			  "memory.stat still has %s", old_stat[i]);
	TT_EXPECT(cg_read_key(cg, "memory.stat", "pgdemote_tierlimit") == 0,
		  "memory.stat pgdemote_tierlimit of a new cgroup: %lld",
		  cg_read_key(cg, "memory.stat", "pgdemote_tierlimit"));
	TT_EXPECT(cg_read_key(cg, "memory.stat", "pgpromote_tierlimit_denied") == 0,
		  "memory.stat pgpromote_tierlimit_denied of a new cgroup: %lld",
		  cg_read_key(cg, "memory.stat", "pgpromote_tierlimit_denied"));

	/* One line per tier but the slowest, fastest first, and the defaults. */
	TT_EXPECT(read_lines(cg, CURRENT, vals), "bad %s", CURRENT);
	for (int i = 0; i < nlines; i++)
		TT_EXPECT(vals[i] == 0, "%s of a new cgroup: line %d is %lld", CURRENT,
			  tiers[i].key, vals[i]);
	TT_EXPECT(read_lines(cg, PEAK, vals), "bad %s", PEAK);
	for (int i = 0; i < nlines; i++)
		TT_EXPECT(vals[i] == 0, "%s of a new cgroup: line %d is %lld", PEAK,
			  tiers[i].key, vals[i]);
	TT_EXPECT(read_lines(cg, LOW, vals), "bad %s", LOW);
	for (int i = 0; i < nlines; i++)
		TT_EXPECT(vals[i] == 0, "default %s line %d is %lld", LOW, tiers[i].key, vals[i]);
	TT_EXPECT(read_lines(cg, HIGH, vals), "bad %s", HIGH);
	for (int i = 0; i < nlines; i++)
		TT_EXPECT(vals[i] == TT_TIER_MAX, "default %s line %d is %lld, want max", HIGH,
			  tiers[i].key, vals[i]);
	TT_EXPECT(read_lines(cg, MAX, vals), "bad %s", MAX);
	for (int i = 0; i < nlines; i++)
		TT_EXPECT(vals[i] == TT_TIER_MAX, "default %s line %d is %lld, want max", MAX,
			  tiers[i].key, vals[i]);

	/* "N low=0 high=0 max=0 fallback=0", exactly. */
	snprintf(path, sizeof(path), "%s/%s", cg, EVENTS);
	TT_EXPECT(read_text(path, buf, sizeof(buf)) > 0, "cannot read %s", EVENTS);
	TT_EXPECT(buf[strlen(buf) - 1] == '\n', "%s does not end in a newline", EVENTS);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		long long lo = -1, hi = -1, mx = -1, fb = -1;
		char again[256];
		int key = -1;

		TT_EXPECT(n < nlines, "%s has more than %d lines", EVENTS, nlines);
		/* Parsed, then printed back: it must be the same text. */
		sscanf(line, "%d low=%lld high=%lld max=%lld fallback=%lld", &key, &lo, &hi, &mx,
		       &fb);
		snprintf(again, sizeof(again), "%d low=%lld high=%lld max=%lld fallback=%lld", key,
			 lo, hi, mx, fb);
		TT_EXPECT(!strcmp(line, again),
			  "%s line %d is \"%s\", want \"N low=<n> high=<n> max=<n> fallback=<n>\"",
			  EVENTS, n + 1, line);
		TT_EXPECT(key == tiers[n].key, "%s line %d has key %d, want %d", EVENTS, n + 1,
			  key, tiers[n].key);
		TT_EXPECT(lo == 0 && hi == 0 && mx == 0 && fb == 0,
			  "%s of a new cgroup: \"%s\"", EVENTS, line);
	}
	TT_EXPECT(n == nlines, "%s has %d lines, want %d", EVENTS, n, nlines);

	err = cg_write(cg, CURRENT, "0");
	TT_EXPECT(err != 0, "%s accepted a write", CURRENT);
	snprintf(buf, sizeof(buf), "%d 0\n", tiers[0].key);
	err = cg_write(cg, CURRENT, buf);
	TT_EXPECT(err != 0, "%s accepted a write of \"%d 0\"", CURRENT, tiers[0].key);
	return TT_PASS;
}

/*
 * Anonymous memory allocated on node0, moved down the tiers one node at a
 * time (node0 -> node1 -> node2 on 3tier), back to node0 and freed.
 */
static enum tt_result anon_body(void)
{
	const long long len = 200 * MB;
	char *cg = tt_cgroup(cg2_root(), "tt_v2_anon");
	long long per_node[TT_MAX_NODES], peak[TT_MAX_TIERS];
	struct holder *h;
	char step[64];

	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(check_step(cg, "empty", on_node(per_node, -1, 0)), "empty cgroup");
	h = hold(0, cg, len, 1, false);
	TT_EXPECT(h, "no holder");
	TT_EXPECT(check_step(cg, "allocated on node0", on_node(per_node, 0, len)),
		  "after allocation");
	for (int node = 1; node < ntiers; node++) {
		snprintf(step, sizeof(step), "moved to node%d", node);
		TT_EXPECT(holder_move(h, node) == 0, "move_pages to node%d failed", node);
		TT_EXPECT(check_step(cg, step, on_node(per_node, node, len)), "%s", step);
	}
	TT_EXPECT(read_lines(cg, PEAK, peak), "bad %s", PEAK);
	for (int i = 0; i < nlines; i++)
		TT_EXPECT(peak[i] >= len - TOL && peak[i] <= len + TOL,
			  "%s line %d is %lld kB after the moves, want ~%lld", PEAK, tiers[i].key,
			  peak[i] / 1024, len / 1024);

	TT_EXPECT(holder_move(h, 0) == 0, "move_pages back to node0 failed");
	TT_EXPECT(check_step(cg, "moved back to node0", on_node(per_node, 0, len)),
		  "after promotion");
	TT_EXPECT(holder_check(h) == 0, "contents changed");

	unhold(0);
	wait_empty(cg);
	TT_EXPECT(check_step(cg, "freed", on_node(per_node, -1, 0)), "after the holder exited");
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

/*
 * THPs (MADV_HUGEPAGE) moved down the tiers and back, then split by
 * dropping the upper half of each: a partly unmapped THP stays charged
 * (and on the LRU) as a whole until the kernel splits it, while numa_stat
 * "anon" drops at once, so that step compares with the LRU entries.
 */
static enum tt_result thp_body(void)
{
	const long long len = 64 * MB;
	char *cg = tt_cgroup(cg2_root(), "tt_v2_thp");
	long long per_node[TT_MAX_NODES], huge;
	char mode[16], step[64];
	struct holder *h;

	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(path_exists(THP_ENABLED), "kernel without transparent huge pages");
	TT_EXPECT(thp_mode(mode, sizeof(mode)), "cannot parse %s", THP_ENABLED);
	memcpy(thp_saved, mode, sizeof(thp_saved));
	TT_EXPECT(write_text(THP_ENABLED, "madvise") == 0, "cannot set THP to madvise");
	h = hold(0, cg, len, 4, true);
	TT_EXPECT(h, "no holder");
	/* The statistics are flushed lazily. */
	for (double deadline = now_s() + SETTLE_S;; usleep(100 * 1000)) {
		huge = cg_read_key(cg, "memory.stat", "anon_thp");
		if (huge >= len / 2 || now_s() > deadline)
			break;
	}
	tt_diag("anon_thp %lld MB of %lld MB", huge / (long long)MB, len / (long long)MB);
	TT_EXPECT(huge >= len / 2, "premise: only %lld MB of THPs", huge / (long long)MB);
	TT_EXPECT(check_step(cg, "THPs on node0", on_node(per_node, 0, len)), "THPs");
	for (int node = 1; node < ntiers; node++) {
		snprintf(step, sizeof(step), "THPs moved to node%d", node);
		TT_EXPECT(holder_move(h, node) == 0, "move_pages to node%d failed", node);
		TT_EXPECT(check_step(cg, step, on_node(per_node, node, len)), "%s", step);
	}
	TT_EXPECT(holder_move(h, 0) == 0, "move_pages back to node0 failed");
	TT_EXPECT(check_step(cg, "THPs back on node0", on_node(per_node, 0, len)), "back");
	/* Dropping the upper half of every huge page splits its PMD. */
	TT_EXPECT(holder_trim(h, 2 * MB, MB) == 0, "MADV_DONTNEED failed");
	TT_EXPECT(check_step_names(cg, "THPs split", on_node(per_node, 0, len), lru_names,
				   ARRAY_SIZE(lru_names), len / 2 + TOL), "split THPs");
	TT_EXPECT(holder_check(h) == 0, "the kept halves changed");
	TT_EXPECT(holder_trim(h, len, 0) == 0, "MADV_DONTNEED failed");
	TT_EXPECT(check_step(cg, "all dropped", on_node(per_node, -1, 0)), "dropped");
	return TT_PASS;
}

static enum tt_result peak_body(void)
{
	const long long len = 128 * MB;
	char *cg = tt_cgroup(cg2_root(), "tt_v2_peak");
	long long v[TT_MAX_TIERS], per_node[TT_MAX_NODES];
	int fd_reset = -1, fd_other = -1, slowest;
	char path[512];
	struct holder *h;
	enum tt_result r = TT_FAIL;

	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	slowest = ntiers - 1;	/* node k is in tier k */
	h = hold(0, cg, len, 2, false);
	TT_EXPECT(h, "no holder");
	TT_EXPECT(holder_move(h, slowest) == 0, "move_pages to node%d failed", slowest);
	TT_EXPECT(check_step(cg, "moved to the slowest tier", on_node(per_node, slowest, len)),
		  "after the move");

	snprintf(path, sizeof(path), "%s/%s", cg, PEAK);
	fd_reset = open(path, O_RDWR | O_CLOEXEC);
	fd_other = open(path, O_RDWR | O_CLOEXEC);
	if (fd_reset < 0 || fd_other < 0) {
		tt_diag("open %s: %s", path, strerror(errno));
		goto out;
	}
	if (!fd_read_lines(fd_reset, v))
		goto out;
	for (int i = 0; i < nlines; i++)
		if (v[i] < len - TOL) {
			tt_diag("peak line %d %lld kB before any reset, want >= %lld",
				tiers[i].key, v[i] / 1024, (len - TOL) / 1024);
			goto out;
		}
	if (write(fd_reset, "reset\n", 6) != 6) {
		tt_diag("reset write: %s", strerror(errno));
		goto out;
	}
	if (!fd_read_lines(fd_reset, v))
		goto out;
	for (int i = 0; i < nlines; i++)
		if (v[i] < 0 || v[i] > TOL) {
			tt_diag("peak line %d %lld kB right after the reset, want ~current (0)",
				tiers[i].key, v[i] / 1024);
			goto out;
		}
	/* The reset is local to that descriptor, as with memory.peak. */
	if (!fd_read_lines(fd_other, v))
		goto out;
	for (int i = 0; i < nlines; i++)
		if (v[i] < len - TOL) {
			tt_diag("another fd's peak line %d dropped to %lld kB", tiers[i].key,
				v[i] / 1024);
			goto out;
		}
	if (!read_lines(cg, PEAK, v))
		goto out;
	for (int i = 0; i < nlines; i++)
		if (v[i] < len - TOL) {
			tt_diag("a fresh fd's peak line %d dropped to %lld kB", tiers[i].key,
				v[i] / 1024);
			goto out;
		}

	/* Each line has a peak of its own: back up one tier at a time. */
	for (int node = slowest - 1; node >= 0; node--) {
		if (holder_move(h, node)) {
			tt_diag("move_pages to node%d failed", node);
			goto out;
		}
		if (!fd_read_lines(fd_reset, v))
			goto out;
		for (int i = 0; i < nlines; i++) {
			long long want = i >= node ? len : 0;

			if (v[i] < want - TOL || v[i] > want + TOL) {
				tt_diag("pages moved to node%d: the reset fd's peak line %d is "
					"%lld kB, want %lld", node, tiers[i].key, v[i] / 1024,
					want / 1024);
				goto out;
			}
		}
	}
	r = TT_PASS;
out:
	if (fd_reset >= 0)
		close(fd_reset);
	if (fd_other >= 0)
		close(fd_other);
	return r;
}

/*
 * Page cache: tmpfs (shmem) written on node0 and on node1, and ramfs (page
 * cache that is not shmem: the guest has no disk filesystem).
 */
static enum tt_result page_cache_body(void)
{
	const long long len = 64 * MB;
	char *cg = tt_cgroup(cg2_root(), "tt_v2_cache");
	long long per_node[TT_MAX_NODES];
	int rc;

	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	rc = write_file_on(cg, SHMEM_FILE, len, 0);
	TT_EXPECT(rc == 0, "writing %s on node0 failed (%d)", SHMEM_FILE, rc);
	TT_EXPECT(cg_read_key(cg, "memory.stat", "shmem") >= len - TOL,
		  "premise: memory.stat shmem %lld", cg_read_key(cg, "memory.stat", "shmem"));
	TT_EXPECT(check_step(cg, "tmpfs file on node0", on_node(per_node, 0, len)), "tmpfs");
	TT_EXPECT(unlink(SHMEM_FILE) == 0, "unlink: %s", strerror(errno));
	TT_EXPECT(check_step(cg, "tmpfs file removed", on_node(per_node, -1, 0)), "unlink");

	rc = write_file_on(cg, SHMEM_FILE, len, 1);
	TT_EXPECT(rc == 0, "writing %s on node1 failed (%d)", SHMEM_FILE, rc);
	TT_EXPECT(check_step(cg, "tmpfs file on node1", on_node(per_node, 1, len)),
		  "tmpfs on node1");
	TT_EXPECT(unlink(SHMEM_FILE) == 0, "unlink: %s", strerror(errno));
	TT_EXPECT(check_step(cg, "tmpfs file removed", on_node(per_node, -1, 0)), "unlink");

	mkdir(RAMFS_DIR, 0755);
	TT_EXPECT(mount("ramfs", RAMFS_DIR, "ramfs", 0, NULL) == 0, "mount ramfs: %s",
		  strerror(errno));
	ramfs_mounted = true;
	rc = write_file_on(cg, RAMFS_FILE, len, 0);
	TT_EXPECT(rc == 0, "writing %s failed (%d)", RAMFS_FILE, rc);
	TT_EXPECT(check_step(cg, "ramfs file on node0", on_node(per_node, 0, len)), "ramfs");
	TT_EXPECT(unlink(RAMFS_FILE) == 0, "unlink: %s", strerror(errno));
	TT_EXPECT(check_step(cg, "ramfs file removed", on_node(per_node, -1, 0)), "unlink");
	return TT_PASS;
}

/*
 * A parent counts its children; a child removed with pages on node0 (its
 * page cache) and lower (moved anon) leaves the parent's count exact, and
 * nothing once the pages are gone.
 */
static enum tt_result hierarchy_body(void)
{
	const long long anon = 100 * MB, file = 64 * MB;
	char *p = tt_cgroup(cg2_root(), "tt_v2_parent");
	long long per_node[TT_MAX_NODES];
	char *c1, *c2, step[64];
	int rc;

	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	TT_EXPECT(p && cg_write(p, "cgroup.subtree_control", "+memory") == 0,
		  "cannot create the parent with memory in its subtree");
	c1 = tt_cgroup(p, "c1");
	c2 = tt_cgroup(p, "c2");
	TT_EXPECT(c1 && c2, "cannot create the children");
	TT_EXPECT(hold(0, c1, anon, 3, false), "no holder in c1");
	rc = write_file_on(c2, SHMEM_FILE, file, 0);
	TT_EXPECT(rc == 0, "writing %s from c2 failed (%d)", SHMEM_FILE, rc);
	on_node(per_node, 0, anon + file);
	TT_EXPECT(check_step(p, "parent", per_node), "parent sum");

	for (int node = ntiers - 1; node >= 1; node--) {
		TT_EXPECT(holder_move(holders[0], node) == 0, "move_pages to node%d failed", node);
		snprintf(step, sizeof(step), "c1 on node%d", node);
		TT_EXPECT(check_step(c1, step, on_node(per_node, node, anon)), "c1 after the move");
		per_node[0] = file;
		snprintf(step, sizeof(step), "parent, c1 on node%d", node);
		TT_EXPECT(check_step(p, step, per_node), "parent");
	}

	/* c2's page cache outlives c2: the parent still counts it. */
	TT_EXPECT(rmdir(c2) == 0, "rmdir c2: %s", strerror(errno));
	TT_EXPECT(check_step(p, "c2 removed", per_node), "parent after rmdir c2");
	unhold(0);
	TT_EXPECT(rmdir(c1) == 0, "rmdir c1: %s", strerror(errno));
	TT_EXPECT(check_step(p, "c1 removed", on_node(per_node, 0, file)),
		  "parent after rmdir c1");
	TT_EXPECT(unlink(SHMEM_FILE) == 0, "unlink: %s", strerror(errno));
	wait_empty(p);
	TT_EXPECT(check_step(p, "children gone", on_node(per_node, -1, 0)),
		  "parent keeps a residue");
	return TT_PASS;
}

TT_WITH_CLEANUP(test_files, files_body(), cleanup)
TT_WITH_CLEANUP(test_anon, anon_body(), cleanup)
TT_WITH_CLEANUP(test_thp, thp_body(), cleanup)
TT_WITH_CLEANUP(test_peak, peak_body(), cleanup)
TT_WITH_CLEANUP(test_page_cache, page_cache_body(), cleanup)
TT_WITH_CLEANUP(test_hierarchy, hierarchy_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "files_format_defaults_non_root_only", test_files },
		{ "anon_follows_migration_down_the_tiers", test_anon },
		{ "thp_moved_and_split", test_thp },
		{ "peak_reads_and_resets_like_memory_peak", test_peak },
		{ "tmpfs_and_ramfs_page_cache", test_page_cache },
		{ "hierarchy_and_removed_children", test_hierarchy },
	};

	ntiers = tiers_read(tiers, TT_MAX_TIERS);
	nlines = ntiers > 0 ? ntiers - 1 : 0;
	for (int node = 0; node < TT_MAX_NODES; node++) {
		node_tier[node] = -1;
		for (int i = 0; i < ntiers; i++)
			if (tiers[i].nodes[node])
				node_tier[node] = i;
	}
	if (ntiers < 2)
		printf("# %d memory tiers with memory (%s)\n", ntiers,
		       ntiers < 0 ? strerror(-ntiers) : "need two");
	return tt_run(cases, ARRAY_SIZE(cases));
}

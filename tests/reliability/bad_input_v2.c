// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to the cgroup v2 memory.tiers.* files, the tiering sysctls and
 * the read-only tiering sysfs files.  Each writable interface is set to a
 * known value that is not its default (so a reset cannot pass for "kept"),
 * then fed a table of bad values: every one must be refused with EINVAL
 * and the file must read back as before, every line of it.  All values of
 * a table are tried; the case lists each one that was not refused.  The
 * runner fails the test on any console splat.
 *
 * memory.tiers.{low,high,max} take lines "N value", N the key of a memory
 * tier (read from /sys/devices/virtual/memory_tiering, never assumed), one
 * line per tier except the slowest.  Bad writes, besides bad values: an
 * unknown key, the slowest tier's key, a missing value, a malformed line,
 * `max` for low, and two lines of which one is bad (all lines are checked
 * before any takes effect: the good one must not take effect either).  On
 * 3tier the value set first is a write of two good lines, which must set
 * both.  (`auto` is refused today too, but is to become a value: not
 * tested here.)
 *
 * The errnos, from the 6.12 sources:
 *  - a bad value: EINVAL, from the memory.tiers parser and from
 *    proc_dointvec_minmax() / proc_douintvec_minmax(), which turn every
 *    parse and range failure into EINVAL;
 *  - root writing a read-only cgroup file (0444): the cgroup kernfs root
 *    has no KERNFS_ROOT_EXTRA_OPEN_PERM_CHECK and CAP_DAC_OVERRIDE passes
 *    the mode, so the open succeeds; cgroup_file_write() finds no write
 *    method and returns EINVAL;
 *  - root writing a read-only sysfs file (0444): sysfs's kernfs root has
 *    that flag and kernfs_fop_open() refuses the open with EACCES;
 *  - the root cgroup: the v2 files are CFTYPE_NOT_ON_ROOT, so opening one
 *    there for writing fails with ENOENT;
 *  - uid 65534: the open fails with EACCES (cgroup files are 0644 or 0444
 *    and root's, sysctls 0644); writing a sysctl fd that root opened fails
 *    with EPERM, as proc_sys_call_handler() checks the writer again.
 *
 * memory.tiers.peak is the exception: like 6.12's memory.peak, any
 * non-empty write resets the peak that fd reads, whatever it says, so it
 * refuses nothing.  The test checks it takes every value of the table
 * exactly as memory.peak does, and that the peak a new fd reads stays.
 *
 * toptier-test: topology=2tier,3tier timeout=300 debug=yes
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#define LOW		"memory.tiers.low"
#define HIGH		"memory.tiers.high"
#define MAX		"memory.tiers.max"
#define PEAK		"memory.tiers.peak"
#define CURRENT		"memory.tiers.current"
#define EVENTS		"memory.tiers.events"
#define TIERS_DIR	"/sys/devices/virtual/memory_tiering"
#define SCALE_FACTOR	"/proc/sys/vm/toptier_scale_factor"
#define ZONE_RECLAIM	"/proc/sys/vm/zone_reclaim_mode"
#define HOT_THRESHOLD	"/proc/sys/kernel/numa_balancing_hot_threshold_ms"
#define RATE_LIMIT	"/proc/sys/kernel/numa_balancing_rate_limit_mbps"
#define NODE_DIR	"/sys/devices/system/node"
#define IS_TOPTIER	NODE_DIR "/is_toptier"

static const char *const v2_files[] = { LOW, HIGH, MAX, PEAK, CURRENT, EVENTS };
static const char *const old_files[] = {
	"memory.toptier.low", "memory.toptier.high", "memory.toptier.max",
	"memory.toptier.peak", "memory.toptier.current", "memory.toptier.events",
};

static struct tt_tier tiers[TT_MAX_TIERS];
static int ntiers;
/* The keys of the tiers of node0 and node1. */
#define K0 (tiers[0].key)
#define K1 (tiers[1].key)
#define KSLOW (tiers[ntiers - 1].key)

/*
 * Bad values for memory.tiers.{low,high,max}, written after a valid key
 * ("N value"), and as they are to memory.tiers.peak.  "\n" is the empty
 * value: it is what echo "" writes, and a zero-length write never reaches
 * a kernfs handler (cgroup_file_write() returns 0 for it).  Values above
 * the page counter range are clamped to "max", as memory.max does, so
 * "huge" here means beyond 64 bits.
 */
static const char *const bad_bytes[] = {
	"\n",				/* empty */
	"-1", "-1M",			/* negative */
	"abc", "G", "max1", "MAX",	/* garbage, a unit alone, near-"max" */
	"99999999999999999999",		/* more than 64 bits */
	"18446744073709551616",		/* 2^64 */
	"16E",				/* 2^64 once the suffix applies */
	"5x", "5 5", "5 M", "5KB",	/* trailing junk */
	"1.5G", "+5", "0x10", "1e3",	/* fraction, sign, hex, exponent */
	NULL
};

/*
 * The sysctls.  Hex and octal ("0x10", "010") are not bad values:
 * proc_dointvec and proc_douintvec parse numbers in base 0.
 */
#define BAD_INT "\n", "-1", "abc", "99999999999999999999", "5x", "5 5", "10M", "1.5", "+5"
static const struct sysctl {
	const char *path;
	const char *set;	/* valid and not the default */
	const char *other;	/* valid, neither set nor the default */
	const char *bad[16];	/* NULL-terminated */
} sysctls[] = {
	/* proc_dointvec_minmax, 1..10000 */
	{ SCALE_FACTOR, "500", "700", { BAD_INT, "0", "10001", "2147483648" } },
	/* proc_dointvec_minmax, 0..INT_MAX: other bits kept, as in 6.12 */
	{ ZONE_RECLAIM, "8", "1", { BAD_INT, "4294967304" } },
	/* proc_douintvec_minmax, 1..60000 */
	{ HOT_THRESHOLD, "750", "900", { BAD_INT, "0", "60001", "4294967296" } },
	/* proc_dointvec_minmax on an unsigned int, 0..INT_MAX */
	{ RATE_LIMIT, "456", "789", { BAD_INT, "2147483648", "4294967296" } },
};
static char sysctl_orig[ARRAY_SIZE(sysctls)][32];

/* ---- what each case leaves behind, undone by cleanup() -------------------- */
static struct holder *holders[1];

static char *mkcg(const char *name)
{
	return tt_cgroup(cg2_root(), name);
}

static void cleanup(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	tt_release_all();
	for (size_t i = 0; i < ARRAY_SIZE(sysctls); i++)
		if (sysctl_orig[i][0])
			write_text(sysctls[i].path, sysctl_orig[i]);
}

/* ---- helpers ---------------------------------------------------------------- */
/* A value as the messages show it, with "\n" spelled out. */
static const char *shown(const char *val)
{
	static char bufs[4][64];
	static int next;
	char *buf = bufs[next++ % 4];
	size_t o = 0;

	for (; *val && o + 3 < sizeof(bufs[0]); val++) {
		if (*val == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *val;
		}
	}
	buf[o] = 0;
	return buf;
}

/* What a write_once() of val did, for the messages. */
static const char *outcome(int r, const char *val)
{
	static char bufs[2][64];
	static int next;
	char *buf = bufs[next++ % 2];

	if (r < 0)
		snprintf(buf, sizeof(bufs[0]), "failed with %s", strerrorname_np(-r));
	else if ((size_t)r == strlen(val))
		snprintf(buf, sizeof(bufs[0]), "was accepted");
	else
		snprintf(buf, sizeof(bufs[0]), "was partly accepted (%d of %zu bytes)", r,
			 strlen(val));
	return buf;
}

/* A file's contents without the last newline, or why it cannot be read. */
static bool read_value(const char *path, char *buf, size_t len)
{
	int n = read_text(path, buf, len);

	if (n < 0) {
		snprintf(buf, len, "(unreadable: %s)", strerrorname_np(-n));
		return false;
	}
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return true;
}

/* Write val to path once: refused with want, and path still reads before. */
static enum tt_result refused(const char *path, const char *val, int want, const char *before)
{
	char after[256];
	int r = write_once(path, val);
	bool readable = read_value(path, after, sizeof(after));

	TT_EXPECT(r == -want, "%s: \"%s\" %s, want %s; it reads \"%s\", was \"%s\"", path,
		  shown(val), outcome(r, val), strerrorname_np(want), after, before);
	TT_EXPECT(readable && !strcmp(after, before),
		  "%s: after \"%s\" it reads \"%s\", was \"%s\"", path, shown(val), after, before);
	return TT_PASS;
}

/* Set path to set, then every bad value is refused with EINVAL and changes nothing. */
static enum tt_result refuse_table(const char *path, const char *set, const char *const *bad)
{
	char dflt[256], before[256];
	int failed = 0, n = 0, err;

	TT_EXPECT(read_value(path, dflt, sizeof(dflt)), "%s: %s", path, dflt);
	err = write_text(path, set);
	TT_EXPECT(err == 0, "%s: cannot set %s: %s", path, set, strerror(-err));
	TT_EXPECT(read_value(path, before, sizeof(before)), "%s: %s", path, before);
	TT_EXPECT(strcmp(before, dflt), "premise: %s was \"%s\" before it was set", path, dflt);
	for (; *bad; bad++, n++) {
		if (refused(path, *bad, EINVAL, before) == TT_PASS)
			continue;
		failed++;
		write_text(path, set);	/* the next value starts from it again */
	}
	TT_EXPECT(failed == 0, "%s: %d of %d bad values were not refused", path, failed, n);
	tt_diag("%s: all %d bad values refused, the value kept", path, n);
	return TT_PASS;
}

/* ---- the root cgroup -------------------------------------------------------- */
static enum tt_result test_root(void)
{
	const char *root = cg2_root();
	char path[512];

	TT_EXPECT(root, "no cgroup2 hierarchy with the memory controller");
	for (size_t i = 0; i < ARRAY_SIZE(v2_files); i++) {
		int r;

		snprintf(path, sizeof(path), "%s/%s", root, v2_files[i]);
		r = write_once(path, "0");
		TT_EXPECT(r == -ENOENT, "the root cgroup's %s: writing 0 %s, want ENOENT",
			  v2_files[i], outcome(r, "0"));
	}
	/* The files memory.tiers.* replaced are gone, from every cgroup. */
	for (size_t i = 0; i < ARRAY_SIZE(old_files); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, old_files[i]);
		TT_EXPECT(!path_exists(path), "%s is still there", path);
	}
	return TT_PASS;
}

/* ---- the limits ------------------------------------------------------------- */
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

static bool is_key(int key)
{
	for (int i = 0; i < ntiers; i++)
		if (tiers[i].key == key)
			return true;
	return false;
}

/* A memory_tierN directory of a tier without memory, or -1. */
static int memoryless_tier(void)
{
	struct dirent *d;
	DIR *dir = opendir(TIERS_DIR);
	int found = -1;

	while (dir && found < 0 && (d = readdir(dir))) {
		char *end;
		long key;

		if (strncmp(d->d_name, "memory_tier", 11))
			continue;
		key = strtol(d->d_name + 11, &end, 10);
		if (end != d->d_name + 11 && !*end && key >= 0 && key < INT_MAX && !is_key(key))
			found = (int)key;
	}
	if (dir)
		closedir(dir);
	return found;
}

#define MAX_BAD 64
static char bad_buf[MAX_BAD][96];
static const char *bad_lines[MAX_BAD + 1];
static int nbad;

static void add_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add_bad(const char *fmt, ...)
{
	va_list ap;

	if (nbad == MAX_BAD)
		return;
	va_start(ap, fmt);
	vsnprintf(bad_buf[nbad], sizeof(bad_buf[0]), fmt, ap);
	va_end(ap);
	bad_lines[nbad] = bad_buf[nbad];
	bad_lines[++nbad] = NULL;
}

/*
 * The bad writes to a limit file whose set value is not 64M on any line:
 * "good" lines below write 64M, so that one taking effect shows.
 */
static const char *const *bad_table(bool low)
{
	int unknown = K0 + 1, far = KSLOW + 1000, memoryless = memoryless_tier();

	while (is_key(unknown))
		unknown++;
	nbad = 0;
	bad_lines[0] = NULL;
	/* Bad values after a valid key. */
	for (const char *const *v = bad_bytes; *v; v++)
		add_bad("%d %s", K0, *v);
	if (low)
		add_bad("%d max\n", K0);	/* low refuses max */
	/* Unknown keys: the slowest tier's, ones that are no tier's, huge, negative. */
	add_bad("%d 64M\n", KSLOW);
	add_bad("%d 64M\n", unknown);
	add_bad("%d 64M\n", far);
	add_bad("99999999999999999999 64M\n");
	add_bad("-%d 64M\n", K0);
	if (memoryless >= 0)
		add_bad("%d 64M\n", memoryless);
	/* A missing value. */
	add_bad("%d", K0);
	add_bad("%d\n", K0);
	/* Malformed lines. */
	add_bad("junk\n");
	add_bad("abc 64M\n");
	add_bad("%dx 64M\n", K0);
	add_bad("%d 64M junk\n", K0);
	add_bad("%d 64M 64M\n", K0);
	add_bad("%d=64M\n", K0);
	add_bad("64M\n");
	/* Two lines, one bad: nothing may take effect, the good line neither. */
	add_bad("%d 64M\n%d 64M\n", K0, KSLOW);
	add_bad("%d 64M\n%d 64M\n", K0, unknown);
	add_bad("%d 64M\n%d abc\n", K0, K0);
	add_bad("%d abc\n%d 64M\n", K0, K0);
	add_bad("%d 64M\njunk\n", K0);
	add_bad("%d 64M\n%d\n", K0, K0);
	if (ntiers >= 3) {
		add_bad("%d 64M\n%d abc\n", K0, K1);
		add_bad("%d -1\n%d 64M\n", K0, K1);
		add_bad("%d 64M\n%d 64M\n%d 64M\n", K0, K1, KSLOW);
		if (low)
			add_bad("%d 64M\n%d max\n", K0, K1);
	}
	return bad_lines;
}

/*
 * Set the file to its value (on 3tier both lines in one write, which must
 * set both), then every bad write is refused with EINVAL and changes
 * nothing, and the file still reads as "N value" lines.
 */
static enum tt_result limit_body(const char *file, long long v0, long long v1, bool low)
{
	char *cg = mkcg("tt_bad_limit");
	char path[512], set[128];
	enum tt_result r;

	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (ntiers >= 3)
		snprintf(set, sizeof(set), "%d %lldM\n%d %lldM\n", K0, v0, K1, v1);
	else
		snprintf(set, sizeof(set), "%d %lldM\n", K0, v0);
	r = refuse_table(path, set, bad_table(low));
	if (r != TT_PASS)
		return r;
	TT_EXPECT(cg_tier_read(cg, file, K0) == v0 * (long long)MB, "%s line %d reads %lld, "
		  "want %lld MB", file, K0, cg_tier_read(cg, file, K0), v0);
	if (ntiers >= 3)
		TT_EXPECT(cg_tier_read(cg, file, K1) == v1 * (long long)MB, "%s line %d reads "
			  "%lld, want %lld MB: a write of two lines did not set both", file, K1,
			  cg_tier_read(cg, file, K1), v1);
	return TT_PASS;
}

/* ---- memory.tiers.peak ------------------------------------------------------ */
static int write_fd(int fd, const char *val)
{
	ssize_t r = write(fd, val, strlen(val));

	return r < 0 ? -errno : (int)r;
}

/* A write through one fd, to memory.peak and memory.tiers.peak alike. */
static enum tt_result peak_write(const char *cg, const char *v, long long peak)
{
	char mpath[512], tpath[512];
	int mfd, tfd, rm, rt;
	long long fd_peak;

	snprintf(mpath, sizeof(mpath), "%s/memory.peak", cg);
	snprintf(tpath, sizeof(tpath), "%s/%s", cg, PEAK);
	mfd = open(mpath, O_RDWR | O_CLOEXEC);
	tfd = open(tpath, O_RDWR | O_CLOEXEC);
	rm = mfd < 0 ? -errno : write_fd(mfd, v);
	rt = tfd < 0 ? -errno : write_fd(tfd, v);
	fd_peak = tfd < 0 ? LLONG_MIN : fd_tier_read(tfd, K0);
	if (mfd >= 0)
		close(mfd);
	if (tfd >= 0)
		close(tfd);
	TT_EXPECT(rt == rm, "\"%s\": %s %s, memory.peak %s", shown(v), PEAK, outcome(rt, v),
		  outcome(rm, v));
	TT_EXPECT(rt == (int)strlen(v), "\"%s\" %s, want it taken as a reset", shown(v),
		  outcome(rt, v));
	TT_EXPECT(fd_peak >= 0 && fd_peak < peak - 8 * (long long)MB,
		  "after \"%s\" the fd reads %lld on line %d: not reset (peak %lld)", shown(v),
		  fd_peak, K0, peak);
	TT_EXPECT(cg_tier_read(cg, PEAK, K0) == peak, "\"%s\" changed the peak a new fd reads: "
		  "%lld, was %lld", shown(v), cg_tier_read(cg, PEAK, K0), peak);
	return TT_PASS;
}

static enum tt_result peak_body(void)
{
	char *cg = mkcg("tt_bad_peak");
	long long peak, cur;

	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	/* A peak well above the usage: 16 MB on node0, then freed. */
	holders[0] = holder_start(cg, 16 * MB, 4, false);
	TT_EXPECT(holders[0], "no holder");
	holder_stop(holders[0]);
	holders[0] = NULL;
	peak = cg_tier_read(cg, PEAK, K0);
	cur = cg_tier_read(cg, CURRENT, K0);
	TT_EXPECT(peak >= 15 * (long long)MB && cur >= 0 && cur < peak - 8 * (long long)MB,
		  "premise: peak %lld, current %lld (line %d)", peak, cur, K0);
	for (const char *const *v = bad_bytes; *v; v++)
		if (peak_write(cg, *v, peak) != TT_PASS)
			return TT_FAIL;
	/* What is bad for the limits is a reset here too. */
	for (const char *const *v = bad_table(true); *v; v++)
		if (peak_write(cg, *v, peak) != TT_PASS)
			return TT_FAIL;
	return TT_PASS;
}

/* ---- read-only files -------------------------------------------------------- */
static enum tt_result ro_cgroup_body(void)
{
	static const char *const files[] = { CURRENT, EVENTS };
	char *cg = mkcg("tt_bad_ro");
	char path[512], before[256], line[32];

	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	snprintf(line, sizeof(line), "%d 0\n", K0);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		enum tt_result r;

		snprintf(path, sizeof(path), "%s/%s", cg, files[i]);
		TT_EXPECT(read_value(path, before, sizeof(before)), "%s: %s", path, before);
		/* The open succeeds; the write finds no handler. */
		r = refused(path, "0", EINVAL, before);
		if (r == TT_PASS)
			r = refused(path, line, EINVAL, before);
		if (r != TT_PASS)
			return r;
	}
	return TT_PASS;
}

/* The sysfs files, with the count of nodes that have a threshold file. */
static int sysfs_files(char paths[TT_MAX_NODES + 1][128])
{
	int n = 0, nodes = 0;

	snprintf(paths[n++], 128, "%s", IS_TOPTIER);
	for (int node = 0; node < TT_MAX_NODES; node++) {
		snprintf(paths[n], 128, NODE_DIR "/node%d/numa_balancing_hot_threshold_ms", node);
		if (path_exists(paths[n])) {
			n++;
			nodes++;
		}
	}
	return nodes < 2 ? -nodes : n;
}

static enum tt_result test_ro_sysfs(void)
{
	char paths[TT_MAX_NODES + 1][128], before[256];
	int n = sysfs_files(paths);

	TT_EXPECT(n > 0, "only %d nodes have numa_balancing_hot_threshold_ms", -n);
	for (int i = 0; i < n; i++) {
		enum tt_result r;

		TT_EXPECT(read_value(paths[i], before, sizeof(before)), "%s: %s", paths[i], before);
		/* kernfs_fop_open() refuses the open. */
		r = refused(paths[i], "1", EACCES, before);
		if (r != TT_PASS)
			return r;
	}
	return TT_PASS;
}

/* ---- the sysctls ------------------------------------------------------------ */
static enum tt_result sysctl_body(size_t i)
{
	TT_EXPECT(sysctl_orig[i][0], "no readable %s", sysctls[i].path);
	return refuse_table(sysctls[i].path, sysctls[i].set, sysctls[i].bad);
}

/* ---- an unprivileged writer ------------------------------------------------- */
struct nobody_write {
	const char *path, *val;
	int fd;		/* root's fd to write, or -1 to open path */
};

static int nobody_write(void *arg)
{
	const struct nobody_write *w = arg;

	return w->fd < 0 ? write_once(w->path, w->val) : write_fd(w->fd, w->val);
}

/* uid 65534 writing val, a valid value, is refused with want; nothing changes. */
static enum tt_result nobody_refused(const char *path, const char *val, int fd, int want)
{
	struct nobody_write w = { path, val, fd };
	char before[256], after[256];
	int r;

	TT_EXPECT(read_value(path, before, sizeof(before)), "%s: %s", path, before);
	r = as_nobody(nobody_write, &w);
	TT_EXPECT(r != INT_MIN, "no child running as uid 65534");
	read_value(path, after, sizeof(after));
	TT_EXPECT(r == -want, "%s: uid 65534 writing \"%s\"%s %s, want %s", path, val,
		  fd >= 0 ? " to root's fd" : "", outcome(r, val), strerrorname_np(want));
	TT_EXPECT(!strcmp(after, before),
		  "%s: after uid 65534 wrote \"%s\" it reads \"%s\", was \"%s\"", path, val,
		  after, before);
	return TT_PASS;
}

static enum tt_result nobody_body(void)
{
	static const struct {
		const char *file, *val;	/* val after the key of node0's tier, or alone */
		bool keyed;
	} files[] = {
		{ LOW, "1M", true }, { HIGH, "1M", true }, { MAX, "1M", true },
		{ PEAK, "1", false }, { CURRENT, "0", false }, { EVENTS, "0", false },
	};
	char *cg = mkcg("tt_bad_nobody");
	char path[512], paths[TT_MAX_NODES + 1][128], val[64];
	int failed = 0, n;

	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", cg, files[i].file);
		if (files[i].keyed)
			snprintf(val, sizeof(val), "%d %s\n", K0, files[i].val);
		else
			snprintf(val, sizeof(val), "%s", files[i].val);
		failed += nobody_refused(path, val, -1, EACCES) != TT_PASS;
	}
	for (size_t i = 0; i < ARRAY_SIZE(sysctls); i++) {
		int fd = open(sysctls[i].path, O_WRONLY | O_CLOEXEC);

		failed += nobody_refused(sysctls[i].path, sysctls[i].other, -1, EACCES) != TT_PASS;
		TT_EXPECT(fd >= 0, "root cannot open %s: %s", sysctls[i].path, strerror(errno));
		failed += nobody_refused(sysctls[i].path, sysctls[i].other, fd, EPERM) != TT_PASS;
		close(fd);
	}
	n = sysfs_files(paths);
	TT_EXPECT(n > 0, "only %d nodes have numa_balancing_hot_threshold_ms", -n);
	for (int i = 0; i < n; i++)
		failed += nobody_refused(paths[i], "1", -1, EACCES) != TT_PASS;
	TT_EXPECT(failed == 0, "%d unprivileged writes were not refused", failed);
	return TT_PASS;
}

/* ---- afterwards ------------------------------------------------------------- */
static enum tt_result reads_body(void)
{
	struct tt_zone zones[TT_MAX_ZONES];
	char *cg = mkcg("tt_bad_reads");
	char buf[256], paths[TT_MAX_NODES + 1][128];
	bool nodes[TT_MAX_NODES];
	int n;

	TT_EXPECT(tiers_ok(), "the memory tiers are not the workbench's");
	TT_EXPECT(cg, "cannot create the cgroup");
	holders[0] = holder_start(cg, 16 * MB, 5, false);
	TT_EXPECT(holders[0], "no holder");
	for (int i = 0; i < ntiers - 1; i++) {
		int key = tiers[i].key;
		long long cur = cg_tier_read(cg, CURRENT, key), peak = cg_tier_read(cg, PEAK, key);

		/* The 16 MB are on node0: in every line, cumulative. */
		TT_EXPECT(cur >= 15 * (long long)MB, "%s line %d is %lld with 16 MB held", CURRENT,
			  key, cur);
		TT_EXPECT(peak >= cur, "%s line %d %lld below current %lld", PEAK, key, peak, cur);
		TT_EXPECT(cg_tier_read(cg, LOW, key) == 0, "%s line %d is %lld", LOW, key,
			  cg_tier_read(cg, LOW, key));
		TT_EXPECT(cg_tier_read(cg, HIGH, key) == TT_TIER_MAX, "%s line %d is %lld", HIGH,
			  key, cg_tier_read(cg, HIGH, key));
		TT_EXPECT(cg_tier_read(cg, MAX, key) == TT_TIER_MAX, "%s line %d is %lld", MAX,
			  key, cg_tier_read(cg, MAX, key));
		TT_EXPECT(cg_tier_event(cg, key, "low") == 0 &&
			  cg_tier_event(cg, key, "high") == 0 &&
			  cg_tier_event(cg, key, "max") == 0 &&
			  cg_tier_event(cg, key, "fallback") == 0,
			  "%s line %d of a new cgroup is not all 0", EVENTS, key);
	}
	TT_EXPECT(cg_tier_read(cg, CURRENT, KSLOW) == LLONG_MIN, "%s has a line for the slowest "
		  "tier, %d", CURRENT, KSLOW);
	TT_EXPECT(cg_read_key(cg, "memory.stat", "pgdemote_tierlimit") == 0,
		  "memory.stat pgdemote_tierlimit %lld",
		  cg_read_key(cg, "memory.stat", "pgdemote_tierlimit"));
	TT_EXPECT(file_key("/proc/meminfo", "TopTierTotal") > 0, "/proc/meminfo TopTierTotal %lld",
		  file_key("/proc/meminfo", "TopTierTotal"));
	n = zoneinfo_read(zones, TT_MAX_ZONES);
	TT_EXPECT(n > 0, "cannot parse /proc/zoneinfo (%d)", n);
	for (int i = 0; i < n; i++)
		TT_EXPECT(zones[i].toptier >= 0, "node%d %s has no toptier watermark",
			  zones[i].node, zones[i].name);
	TT_EXPECT(read_value(IS_TOPTIER, buf, sizeof(buf)) && nodelist_parse(buf, nodes) == 1 &&
		  nodes[0], "%s is \"%s\", want node0", IS_TOPTIER, buf);
	n = sysfs_files(paths);
	TT_EXPECT(n > 0, "only %d nodes have numa_balancing_hot_threshold_ms", -n);
	for (int i = 1; i < n; i++)
		TT_EXPECT(read_ll(paths[i]) > 0, "%s reads %lld", paths[i], read_ll(paths[i]));
	/* cleanup() of the earlier cases put the originals back. */
	for (size_t i = 0; i < ARRAY_SIZE(sysctls); i++)
		TT_EXPECT(read_value(sysctls[i].path, buf, sizeof(buf)) &&
			  !strcmp(buf, sysctl_orig[i]), "%s reads \"%s\", originally \"%s\"",
			  sysctls[i].path, buf, sysctl_orig[i]);
	return TT_PASS;
}

TT_WITH_CLEANUP(test_low, limit_body(LOW, 100, 150, true), cleanup)
TT_WITH_CLEANUP(test_high, limit_body(HIGH, 200, 250, false), cleanup)
TT_WITH_CLEANUP(test_max, limit_body(MAX, 300, 350, false), cleanup)
TT_WITH_CLEANUP(test_peak, peak_body(), cleanup)
TT_WITH_CLEANUP(test_ro_cgroup, ro_cgroup_body(), cleanup)
TT_WITH_CLEANUP(test_scale_factor, sysctl_body(0), cleanup)
TT_WITH_CLEANUP(test_zone_reclaim, sysctl_body(1), cleanup)
TT_WITH_CLEANUP(test_hot_threshold, sysctl_body(2), cleanup)
TT_WITH_CLEANUP(test_rate_limit, sysctl_body(3), cleanup)
TT_WITH_CLEANUP(test_nobody, nobody_body(), cleanup)
TT_WITH_CLEANUP(test_reads, reads_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "v2_files_absent_on_root_cgroup", test_root },
		{ "tiers_low_refuses_bad_writes", test_low },
		{ "tiers_high_refuses_bad_writes", test_high },
		{ "tiers_max_refuses_bad_writes", test_max },
		{ "tiers_peak_takes_any_write_as_memory_peak", test_peak },
		{ "read_only_cgroup_files_refuse_root_writes", test_ro_cgroup },
		{ "read_only_sysfs_files_refuse_root_writes", test_ro_sysfs },
		{ "toptier_scale_factor_refuses_bad_values", test_scale_factor },
		{ "zone_reclaim_mode_refuses_bad_values", test_zone_reclaim },
		{ "hot_threshold_ms_refuses_bad_values", test_hot_threshold },
		{ "rate_limit_mbps_refuses_bad_values", test_rate_limit },
		{ "unprivileged_writes_refused", test_nobody },
		{ "tiers_reads_work_after_bad_writes", test_reads },
	};

	for (size_t i = 0; i < ARRAY_SIZE(sysctls); i++)
		if (!read_value(sysctls[i].path, sysctl_orig[i], sizeof(sysctl_orig[i])))
			sysctl_orig[i][0] = 0;
	ntiers = tiers_read(tiers, TT_MAX_TIERS);
	if (ntiers < 0)
		ntiers = 0;
	return tt_run(cases, ARRAY_SIZE(cases));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to the cgroup v2 top-tier files, the tiering sysctls and the
 * read-only tiering sysfs files.  Each writable interface is set to a known
 * value that is not its default (so a reset cannot pass for "kept"), then
 * fed a table of bad values: every one must be refused with EINVAL and the
 * value must read back as before.  All values of a table are tried; the
 * case lists each one that was not refused.  The runner fails the test on
 * any console splat.
 *
 * The errnos, from the 6.12 sources:
 *  - a bad value: EINVAL, from mem_cgroup_toptier_parse() and from
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
 * memory.toptier.peak is the exception: like 6.12's memory.peak, any
 * non-empty write resets the peak that fd reads, whatever it says, so it
 * refuses nothing.  The test checks it takes every value of the table
 * exactly as memory.peak does, and that the peak a new fd reads stays.
 *
 * toptier-test: topology=2tier timeout=300 debug=yes
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

#define LOW		"memory.toptier.low"
#define HIGH		"memory.toptier.high"
#define MAX		"memory.toptier.max"
#define PEAK		"memory.toptier.peak"
#define CURRENT		"memory.toptier.current"
#define EVENTS		"memory.toptier.events"
#define SCALE_FACTOR	"/proc/sys/vm/toptier_scale_factor"
#define ZONE_RECLAIM	"/proc/sys/vm/zone_reclaim_mode"
#define HOT_THRESHOLD	"/proc/sys/kernel/numa_balancing_hot_threshold_ms"
#define RATE_LIMIT	"/proc/sys/kernel/numa_balancing_rate_limit_mbps"
#define NODE_DIR	"/sys/devices/system/node"
#define IS_TOPTIER	NODE_DIR "/is_toptier"

static const char *const v2_files[] = { LOW, HIGH, MAX, PEAK, CURRENT, EVENTS };

/*
 * Bad for memory.toptier.{low,high,max}.  "\n" is the empty value: it is
 * what echo "" writes, and a zero-length write never reaches a kernfs
 * handler (cgroup_file_write() returns 0 for it).  Values above the page
 * counter range are clamped to "max", as memory.max does, so "huge" here
 * means beyond 64 bits.
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
	/* proc_dointvec_minmax, 0..15: bits 1, 2, 4 and 8 */
	{ ZONE_RECLAIM, "8", "1", { BAD_INT, "16", "24", "4294967304" } },
	/* proc_douintvec_minmax, 1..60000 */
	{ HOT_THRESHOLD, "750", "900", { BAD_INT, "0", "60001", "4294967296" } },
	/* proc_dointvec_minmax on an unsigned int, 0..INT_MAX */
	{ RATE_LIMIT, "456", "789", { BAD_INT, "2147483648", "4294967296" } },
};
static char sysctl_orig[ARRAY_SIZE(sysctls)][32];

/* ---- what each case leaves behind, undone by cleanup() -------------------- */
static struct holder *holders[1];
static char *cgroups[2];
static int ncgroups;

static char *mkcg(const char *name)
{
	char *cg = cg_create(cg2_root(), name);

	if (cg && ncgroups < (int)ARRAY_SIZE(cgroups))
		cgroups[ncgroups++] = cg;
	return cg;
}

static void cleanup(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(holders); i++) {
		holder_stop(holders[i]);
		holders[i] = NULL;
	}
	while (ncgroups > 0) {
		char *cg = cgroups[--ncgroups];

		cg_destroy(cg);
		free(cg);
	}
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
	return TT_PASS;
}

/* ---- the limits ------------------------------------------------------------- */
static enum tt_result limit_body(const char *file, const char *set)
{
	char *cg = mkcg("tt_bad_limit");
	char path[512];

	TT_EXPECT(cg, "cannot create the cgroup");
	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return refuse_table(path, set, bad_bytes);
}

/* ---- memory.toptier.peak ---------------------------------------------------- */
static int write_fd(int fd, const char *val)
{
	ssize_t r = write(fd, val, strlen(val));

	return r < 0 ? -errno : (int)r;
}

static enum tt_result peak_body(void)
{
	char *cg = mkcg("tt_bad_peak");
	char mpath[512], tpath[512];
	long long peak, cur;

	TT_EXPECT(cg, "cannot create the cgroup");
	snprintf(mpath, sizeof(mpath), "%s/memory.peak", cg);
	snprintf(tpath, sizeof(tpath), "%s/%s", cg, PEAK);
	/* A peak well above the usage: 16 MB on the top tier, then freed. */
	holders[0] = holder_start(cg, 16 * MB, 4, false);
	TT_EXPECT(holders[0], "no holder");
	holder_stop(holders[0]);
	holders[0] = NULL;
	peak = cg_read_ll(cg, PEAK);
	cur = cg_read_ll(cg, CURRENT);
	TT_EXPECT(peak >= 15 * (long long)MB && cur >= 0 && cur < peak - 8 * (long long)MB,
		  "premise: peak %lld, current %lld", peak, cur);
	for (const char *const *v = bad_bytes; *v; v++) {
		int mfd = open(mpath, O_RDWR | O_CLOEXEC), tfd = open(tpath, O_RDWR | O_CLOEXEC);
		int rm = mfd < 0 ? -errno : write_fd(mfd, *v);
		int rt = tfd < 0 ? -errno : write_fd(tfd, *v);
		long long fd_peak = tfd < 0 ? LLONG_MIN : fd_read_ll(tfd);

		if (mfd >= 0)
			close(mfd);
		if (tfd >= 0)
			close(tfd);
		TT_EXPECT(rt == rm, "\"%s\": %s %s, memory.peak %s", shown(*v), PEAK,
			  outcome(rt, *v), outcome(rm, *v));
		TT_EXPECT(rt == (int)strlen(*v), "\"%s\" %s, want it taken as a reset",
			  shown(*v), outcome(rt, *v));
		TT_EXPECT(fd_peak >= 0 && fd_peak < peak - 8 * (long long)MB,
			  "after \"%s\" the fd reads %lld: not reset (peak %lld)", shown(*v),
			  fd_peak, peak);
		TT_EXPECT(cg_read_ll(cg, PEAK) == peak, "\"%s\" changed the peak a new fd reads: "
			  "%lld, was %lld", shown(*v), cg_read_ll(cg, PEAK), peak);
	}
	return TT_PASS;
}

/* ---- read-only files -------------------------------------------------------- */
static enum tt_result ro_cgroup_body(void)
{
	static const char *const files[] = { CURRENT, EVENTS };
	char *cg = mkcg("tt_bad_ro");
	char path[512], before[256];

	TT_EXPECT(cg, "cannot create the cgroup");
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		enum tt_result r;

		snprintf(path, sizeof(path), "%s/%s", cg, files[i]);
		TT_EXPECT(read_value(path, before, sizeof(before)), "%s: %s", path, before);
		/* The open succeeds; the write finds no handler. */
		r = refused(path, "0", EINVAL, before);
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
		const char *file, *val;
	} files[] = {
		{ LOW, "1M" }, { HIGH, "1M" }, { MAX, "1M" }, { PEAK, "1" },
		{ CURRENT, "0" }, { EVENTS, "0" },
	};
	char *cg = mkcg("tt_bad_nobody");
	char path[512], paths[TT_MAX_NODES + 1][128];
	int failed = 0, n;

	TT_EXPECT(cg, "cannot create the cgroup");
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", cg, files[i].file);
		failed += nobody_refused(path, files[i].val, -1, EACCES) != TT_PASS;
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
	char path[512], buf[256], paths[TT_MAX_NODES + 1][128];
	bool nodes[TT_MAX_NODES];
	long long cur;
	int n;

	TT_EXPECT(cg, "cannot create the cgroup");
	holders[0] = holder_start(cg, 16 * MB, 5, false);
	TT_EXPECT(holders[0], "no holder");
	cur = cg_read_ll(cg, CURRENT);
	TT_EXPECT(cur >= 15 * (long long)MB, "%s is %lld with 16 MB held", CURRENT, cur);
	TT_EXPECT(cg_read_ll(cg, PEAK) >= cur, "%s %lld below current %lld", PEAK,
		  cg_read_ll(cg, PEAK), cur);
	TT_EXPECT(cg_read_ll(cg, LOW) == 0, "%s is %lld", LOW, cg_read_ll(cg, LOW));
	snprintf(path, sizeof(path), "%s/%s", cg, HIGH);
	TT_EXPECT(read_value(path, buf, sizeof(buf)) && !strcmp(buf, "max"), "%s is %s", HIGH, buf);
	snprintf(path, sizeof(path), "%s/%s", cg, MAX);
	TT_EXPECT(read_value(path, buf, sizeof(buf)) && !strcmp(buf, "max"), "%s is %s", MAX, buf);
	TT_EXPECT(cg_read_key(cg, EVENTS, "low") == 0 && cg_read_key(cg, EVENTS, "high") == 0 &&
		  cg_read_key(cg, EVENTS, "max") == 0, "%s of a new cgroup is not all 0", EVENTS);
	TT_EXPECT(cg_read_key(cg, "memory.stat", "toptier") > 0, "memory.stat toptier %lld",
		  cg_read_key(cg, "memory.stat", "toptier"));
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

TT_WITH_CLEANUP(test_low, limit_body(LOW, "100M"), cleanup)
TT_WITH_CLEANUP(test_high, limit_body(HIGH, "200M"), cleanup)
TT_WITH_CLEANUP(test_max, limit_body(MAX, "300M"), cleanup)
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
		{ "toptier_low_refuses_bad_values", test_low },
		{ "toptier_high_refuses_bad_values", test_high },
		{ "toptier_max_refuses_bad_values", test_max },
		{ "toptier_peak_takes_any_write_as_memory_peak", test_peak },
		{ "read_only_cgroup_files_refuse_root_writes", test_ro_cgroup },
		{ "read_only_sysfs_files_refuse_root_writes", test_ro_sysfs },
		{ "toptier_scale_factor_refuses_bad_values", test_scale_factor },
		{ "zone_reclaim_mode_refuses_bad_values", test_zone_reclaim },
		{ "hot_threshold_ms_refuses_bad_values", test_hot_threshold },
		{ "rate_limit_mbps_refuses_bad_values", test_rate_limit },
		{ "unprivileged_writes_refused", test_nobody },
		{ "toptier_reads_work_after_bad_writes", test_reads },
	};

	for (size_t i = 0; i < ARRAY_SIZE(sysctls); i++)
		if (!read_value(sysctls[i].path, sysctl_orig[i], sizeof(sysctl_orig[i])))
			sysctl_orig[i][0] = 0;
	return tt_run(cases, ARRAY_SIZE(cases));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Stress under cgroup v2 (issue 7): cgroups come and go while workers
 * allocate, touch, migrate and free anonymous, file and shmem memory across
 * tiers with THP on, promotion and demotion run, workers move between
 * cgroups and memory.tiers.low/high/max, vm.toptier_scale_factor and more
 * are rewritten at random.  The engine and what it checks are described in
 * lib/stress.c; this file has what is specific to v2.
 *
 * memory.tiers.* have one "N value" line per memory tier except the
 * slowest (N the tier's key, read from sysfs), each cumulative: tier N and
 * every faster tier.  At quiescent points every line of memory.tiers.current
 * must equal the LRU entries of memory.numa_stat (inactive/active anon and
 * file, unevictable) summed over the nodes of the tiers <= N, within TOL
 * (lib/stress.c).  The LRU entries, not anon + file: "anon" is NR_ANON_MAPPED,
 * which drops the unmapped part of a THP that was partially unmapped (and
 * waits on the deferred split queue), while the charge and the LRU keep the
 * whole folio until it is split.  Every line of memory.tiers.peak must be at
 * least that of current, the lines must not decrease from fastest to
 * slowest, and none may be above memory.current.  A write of a
 * memory.tiers.max line well above that line's usage must not block
 * (nothing to demote); "max" written to memory.tiers.low must be refused
 * with EINVAL and leave the line as it was.  At teardown tt_stress must come back to exactly 0.
 *
 * Parameters (kernel command line): toptier.stress_seconds=N (30),
 * toptier.seed=S (from the clock; printed first).
 *
 * toptier-test: topology=2tier timeout=600 debug=yes
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
#include "stress.h"

#define CURRENT		"memory.tiers.current"
#define PEAK		"memory.tiers.peak"

static const char *const lru_names[] = {
	"inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable",
};
static const char *const anon_file[] = { "anon", "file" };

static struct tt_tier tiers[TT_MAX_TIERS];
static int nlines;	/* lines of memory.tiers.*: every tier but the slowest */

static int v2_enable_children(const char *cg)
{
	return cg_write(cg, "cgroup.subtree_control", "+memory");
}

/* The line of the fastest tier (node0's): the engine's "top-tier usage". */
static long long v2_usage(const char *cg)
{
	return nlines > 0 ? cg_tier_read(cg, CURRENT, tiers[0].key) : LLONG_MIN;
}

/* A keyed file's values, in the order of tiers[]: false unless every line is there. */
static bool read_lines(const char *cg, const char *file, long long *vals)
{
	int keys[TT_MAX_TIERS], n;
	long long v[TT_MAX_TIERS];
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	n = keyed_read(path, keys, v, TT_MAX_TIERS);
	if (n != nlines)
		return false;
	for (int i = 0; i < n; i++) {
		if (keys[i] != tiers[i].key)
			return false;
		vals[i] = v[i];
	}
	return true;
}

static bool v2_check(const char *cg, long long *usage, long long *ref, char *why,
		     size_t len)
{
	long long cur[TT_MAX_TIERS], peak[TT_MAX_TIERS], lru[TT_MAX_TIERS], af, mem;
	bool have_cur = read_lines(cg, CURRENT, cur), have_peak = read_lines(cg, PEAK, peak);
	bool ok = have_cur && have_peak;
	size_t off = 0;
	int worst = 0;

	mem = cg_read_ll(cg, "memory.current");
	ok = ok && mem != LLONG_MIN;
	why[0] = 0;
	for (int i = 0; i < nlines; i++) {
		lru[i] = cg2_numa_entries_upto_tier(cg, tiers[i].key, lru_names,
						    ARRAY_SIZE(lru_names));
		af = cg2_numa_entries_upto_tier(cg, tiers[i].key, anon_file,
						ARRAY_SIZE(anon_file));
		if (!have_cur)
			cur[i] = LLONG_MIN;
		if (!have_peak)
			peak[i] = LLONG_MIN;
		if (off < len)
			off += snprintf(why + off, len - off, "%stier %d: current %lld kB, "
					"numa_stat LRU %lld kB (anon+file %lld kB), peak %lld kB",
					i ? "; " : "", tiers[i].key, cur[i] / 1024, lru[i] / 1024,
					af / 1024, peak[i] / 1024);
		if (!ok || lru[i] == LLONG_MIN) {
			ok = false;
			continue;
		}
		if (cur[i] < 0 || llabs(cur[i] - lru[i]) > TOL || peak[i] < cur[i] ||
		    cur[i] > mem + TOL || (i && cur[i] < cur[i - 1]))
			ok = false;
		if (llabs(cur[i] - lru[i]) > llabs(cur[worst] - lru[worst]))
			worst = i;
	}
	if (off < len)
		snprintf(why + off, len - off, "; memory.current %lld kB", mem / 1024);
	/* The line furthest from the statistics is the one to settle. */
	*usage = nlines && have_cur ? cur[worst] : LLONG_MIN;
	*ref = nlines && ok ? lru[worst] : 0;
	return ok && nlines > 0;
}

/*
 * A write of a memory.tiers.max line at least MAX_MARGIN above that line's
 * usage (which the workers may grow meanwhile) has nothing to demote:
 * MAX_WRITE_S is far more than taking the cgroup's locks needs, even on a
 * debug kernel.
 */
#define MAX_MARGIN	(64LL * (long long)MB)
#define MAX_WRITE_S	10

/* A value for a limit: "max", 0, a size with a suffix, or bytes. */
static void limit_value(struct rng *r, char *val, size_t len, long long *bytes)
{
	uint64_t x = rnd(r);

	switch (x % 8) {
	case 0:
	case 1:
		snprintf(val, len, "max");
		*bytes = -1;
		break;
	case 2:
		snprintf(val, len, "0");
		*bytes = 0;
		break;
	case 3:
		/* Bytes, not page aligned: read back rounded down. */
		*bytes = 16 * MB + (long long)(x >> 8) % (496 * MB);
		snprintf(val, len, "%lld", *bytes);
		*bytes = *bytes / page_size * page_size;
		break;
	default:
		*bytes = (16LL << ((x >> 8) % 6)) * (long long)MB;	/* 16M..512M */
		snprintf(val, len, "%lldM", *bytes / (long long)MB);
	}
}

static int v2_rewrite(const char *cg, struct rng *r, char *why, size_t len)
{
	static const char *const files[] = {
		"memory.tiers.low", "memory.tiers.high", "memory.tiers.max",
		"memory.tiers.max", "memory.tiers.high", "memory.tiers.low",
		"memory.tiers.peak", "memory.reclaim",
	};
	const char *file = files[rnd_below(r, ARRAY_SIZE(files))];
	char val[32], path[512];
	long long want, got, before, high;
	double t0, took;
	int err, key;

	limit_value(r, val, sizeof(val), &want);
	if (!strcmp(file, "memory.tiers.peak")) {
		/* A reset through an fd of its own: exercises the peak list. */
		int fd;

		snprintf(path, sizeof(path), "%s/%s", cg, file);
		fd = open(path, O_RDWR);
		err = fd < 0 || write(fd, "reset\n", 6) != 6 ? -errno : 0;
		if (fd >= 0)
			close(fd);
		snprintf(why, len, "reset %s: %s", path, strerror(-err));
		return err;
	}
	if (!strcmp(file, "memory.reclaim")) {
		/* Proactive reclaim demotes here (no swap); it may fall short. */
		snprintf(val, sizeof(val), "%lluM", (unsigned long long)(1 + rnd_below(r, 32)));
		err = cg_write(cg, file, val);
		snprintf(why, len, "write %s to %s/%s: %s", val, cg, file, strerror(-err));
		return err == -EAGAIN ? 0 : err;
	}
	/* Which line: drawn only with more than one, so 2tier seeds stay as they were. */
	key = tiers[nlines > 1 ? rnd_below(r, nlines) : 0].key;
	before = cg_tier_read(cg, CURRENT, key);
	high = cg_tier_read(cg, "memory.tiers.high", key);
	if (!strcmp(file, "memory.tiers.low") && want < 0) {
		/* low refuses "max", and keeps what it had. */
		long long low = cg_tier_read(cg, file, key);

		err = cg_tier_write(cg, file, key, val);
		got = cg_tier_read(cg, file, key);
		snprintf(why, len, "write \"%d %s\" to %s/%s: %s, want EINVAL; it reads %lld, "
			 "was %lld", key, val, cg, file, strerror(-err), got, low);
		return err == -EINVAL && got == low ? 0 : -EINVAL;
	}
	t0 = now_s();
	err = cg_tier_write(cg, file, key, val);
	took = now_s() - t0;
	snprintf(why, len, "write \"%d %s\" to %s/%s: %s", key, val, cg, file, strerror(-err));
	if (err)
		return err;
	/*
	 * Lowering max demotes the excess before the write returns: a max
	 * well above the line's usage has nothing to demote and must return
	 * at once.
	 */
	if (!strcmp(file, "memory.tiers.max") && before >= 0 &&
	    (want < 0 || want >= before + MAX_MARGIN) && took > MAX_WRITE_S) {
		snprintf(why, len, "writing \"%d %s\" to %s/%s blocked for %.1f s, with %lld MB "
			 "in the line before the write: nothing was over the new max "
			 "(memory.tiers.high %lld MB)", key, val, cg, file, took,
			 before / (long long)MB,
			 high == TT_TIER_MAX || high == LLONG_MIN ? -1 : high / (long long)MB);
		return -ETIMEDOUT;
	}
	got = cg_tier_read(cg, file, key);
	if (got == LLONG_MIN)
		return -EIO;
	if (got != (want < 0 ? TT_TIER_MAX : want)) {
		snprintf(why, len, "%s/%s line %d reads %lld after writing %s (want %lld, -1: max)",
			 cg, file, key, got == TT_TIER_MAX ? -1 : got, val, want);
		return -EINVAL;
	}
	return 0;
}

static void v2_before_attach(const char *cg, struct rng *r)
{
	(void)cg;
	(void)r;
}

static void v2_before_spawn(const char *cg)
{
	(void)cg;
}

/*
 * Nothing of the removed children may be left: every line of the page
 * counter must be exactly 0 (it is exact, and every page was freed), and
 * so must the statistics (flushed every 2 s, so they get there too).
 */
static bool v2_parent_empty(const char *cg, char *why, size_t len)
{
	long long cur[TT_MAX_TIERS];
	long long lru = numa_stat_toptier(cg, lru_names, ARRAY_SIZE(lru_names));
	long long anon = cg_read_key(cg, "memory.stat", "anon");
	long long file = cg_read_key(cg, "memory.stat", "file");
	bool have = read_lines(cg, CURRENT, cur), empty;
	size_t off;

	empty = have && anon == 0 && file == 0 && lru == 0;
	off = snprintf(why, len, "memory.stat anon %lld, file %lld, numa_stat LRU on the top "
		       "tier %lld, %s", anon, file, lru, CURRENT);
	for (int i = 0; i < nlines && off < len; i++) {
		off += snprintf(why + off, len - off, " %d:%lld", tiers[i].key,
				have ? cur[i] : -1);
		empty = empty && cur[i] == 0;
	}
	if (!have && off < len)
		snprintf(why + off, len - off, " unreadable");
	return empty;
}

static const struct stress_ops v2_ops = {
	.name = "v2",
	.root = cg2_root,
	.enable_children = v2_enable_children,
	.check = v2_check,
	.usage = v2_usage,
	.rewrite = v2_rewrite,
	.before_attach = v2_before_attach,
	.before_spawn = v2_before_spawn,
	.parent_empty = v2_parent_empty,
};

int main(void)
{
	int ntiers = tiers_read(tiers, TT_MAX_TIERS);

	nlines = ntiers > 1 ? ntiers - 1 : 0;
	if (!nlines)
		printf("# %d memory tiers with memory: memory.tiers.* has no line\n", ntiers);
	return stress_main(&v2_ops);
}

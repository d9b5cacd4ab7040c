// SPDX-License-Identifier: GPL-2.0
/*
 * Stress under cgroup v2 (issue 7): cgroups come and go while workers
 * allocate, touch, migrate and free anonymous, file and shmem memory across
 * tiers with THP on, promotion and demotion run, workers move between
 * cgroups and memory.toptier.low/high/max, vm.toptier_scale_factor and
 * more are rewritten at random.  The engine and what it checks are
 * described in stress.h; this file has what is specific to v2.
 *
 * At quiescent points memory.toptier.current must equal the LRU entries of
 * memory.numa_stat (inactive/active anon and file, unevictable) summed over
 * the top-tier nodes, within TOL (stress.h).  The LRU entries, not anon +
 * file: "anon" is NR_ANON_MAPPED, which drops the unmapped part of a THP
 * that was partially unmapped (and waits on the deferred split queue),
 * while the charge and the LRU keep the whole folio until it is split.
 * memory.stat's toptier (the same LRU statistics) must agree too,
 * memory.toptier.peak must be at least current and current at most
 * memory.current.  A write of memory.toptier.max well above the usage must
 * not block (nothing to demote).  At teardown tt_stress must come back to
 * exactly 0.
 *
 * Parameters (kernel command line): toptier.stress_seconds=N (60),
 * toptier.seed=S (from the clock; printed first).
 *
 * toptier-test: topology=2tier timeout=600 debug=yes
 */
#include "stress.h"

static const char *const lru_names[] = {
	"inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable",
};
static const char *const anon_file[] = { "anon", "file" };

static int v2_enable_children(const char *cg)
{
	return cg_write(cg, "cgroup.subtree_control", "+memory");
}

static long long v2_usage(const char *cg)
{
	return cg_read_ll(cg, "memory.toptier.current");
}

static bool v2_check(const char *cg, long long *usage, long long *ref, char *why,
		     size_t len)
{
	long long cur = v2_usage(cg), lru, af = -1, stat, mem, peak;
	int found = numa_stat_toptier(cg, lru_names, ARRAY_SIZE(lru_names), &lru);

	numa_stat_toptier(cg, anon_file, ARRAY_SIZE(anon_file), &af);
	stat = cg_read_key(cg, "memory.stat", "toptier");
	mem = cg_read_ll(cg, "memory.current");
	peak = cg_read_ll(cg, "memory.toptier.peak");
	*usage = cur;
	*ref = lru;
	snprintf(why, len, "toptier.current %lld kB, numa_stat LRU %lld kB (anon+file %lld kB), "
		 "memory.stat toptier %lld kB, toptier.peak %lld kB, memory.current %lld kB",
		 cur / 1024, lru / 1024, af / 1024, stat / 1024, peak / 1024, mem / 1024);
	if (cur == LLONG_MIN || stat == LLONG_MIN || mem == LLONG_MIN || peak == LLONG_MIN ||
	    found != (int)ARRAY_SIZE(lru_names))
		return false;
	return cur >= 0 && llabs(cur - lru) <= TOL && llabs(stat - lru) <= TOL &&
	       peak >= cur && cur <= mem + TOL;
}

/*
 * A write of memory.toptier.max at least MAX_MARGIN above the usage (which
 * the workers may grow meanwhile) has nothing to demote: MAX_WRITE_S is
 * far more than taking the cgroup's locks needs, even on a debug kernel.
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
		"memory.toptier.low", "memory.toptier.high", "memory.toptier.max",
		"memory.toptier.max", "memory.toptier.high", "memory.toptier.low",
		"memory.toptier.peak", "memory.reclaim",
	};
	const char *file = files[rnd_below(r, ARRAY_SIZE(files))];
	char val[32], path[512], buf[64];
	long long want, got, before, high;
	double t0, took;
	int err;

	limit_value(r, val, sizeof(val), &want);
	if (!strcmp(file, "memory.toptier.peak")) {
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
	before = v2_usage(cg);
	high = cg_read_ll(cg, "memory.toptier.high");	/* LLONG_MIN: "max" */
	t0 = now_s();
	err = cg_write(cg, file, val);
	took = now_s() - t0;
	snprintf(why, len, "write %s to %s/%s: %s", val, cg, file, strerror(-err));
	if (err)
		return err;
	/*
	 * "Writing a limit below the current usage demotes the excess to the
	 * lower tiers before the write returns" (cgroup-v2.rst): a max well
	 * above the usage has nothing to demote and must return at once.
	 */
	if (!strcmp(file, "memory.toptier.max") && before >= 0 &&
	    (want < 0 || want >= before + MAX_MARGIN) && took > MAX_WRITE_S) {
		snprintf(why, len, "writing %s to %s/%s blocked for %.1f s, with %lld MB "
			 "on the top tier before the write: nothing was over the new max "
			 "(memory.toptier.high %lld MB)", val, cg, file, took,
			 before / (long long)MB, high == LLONG_MIN ? -1 : high / (long long)MB);
		return -ETIMEDOUT;
	}
	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return -EIO;
	got = !strncmp(buf, "max", 3) ? -1 : strtoll(buf, NULL, 10);
	if (got != want) {
		snprintf(why, len, "%s/%s reads %lld after writing %s (want %lld)", cg, file,
			 got, val, want);
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
 * Nothing of the removed children may be left: the page counter must be
 * exactly 0 (it is exact, and every page was freed), and so must the LRU
 * statistics (flushed every 2 s, so they get there too).
 */
static bool v2_parent_empty(const char *cg, char *why, size_t len)
{
	static const char *const all_lru[] = {
		"inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable",
	};
	long long cur = v2_usage(cg), stat = cg_read_key(cg, "memory.stat", "toptier");
	long long anon = cg_read_key(cg, "memory.stat", "anon");
	long long file = cg_read_key(cg, "memory.stat", "file"), lru;

	numa_stat_toptier(cg, all_lru, ARRAY_SIZE(all_lru), &lru);
	snprintf(why, len, "toptier.current %lld, memory.stat toptier %lld, anon %lld, file %lld, "
		 "numa_stat LRU on top tier %lld (bytes)", cur, stat, anon, file, lru);
	return cur == 0 && stat == 0 && anon == 0 && file == 0 && lru == 0;
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
	return stress_main(&v2_ops);
}

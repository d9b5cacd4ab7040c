// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to the cgroup v1 top-tier files.
 * memory.toptier_soft_limit_in_bytes takes bytes with an optional K, M, G,
 * T, P or E suffix, or "-1" for unlimited, which reads back as
 * PAGE_COUNTER_MAX pages (9223372036854771712 with 4 KB pages); it is set
 * to a known value, then fed a table of bad values: every one must be
 * refused with EINVAL and the limit must stay.  All values are tried; the
 * case lists each one that was not refused.  The file is not on the root.
 * memory.toptier_usage_in_bytes is read-only, on the root too.  The runner
 * fails the test on any console splat.
 *
 * The errnos, from the 6.12 sources:
 *  - a bad value: EINVAL, from mem_cgroup_toptier_soft_limit_write() and
 *    page_counter_memparse();
 *  - root writing the read-only usage file (0444): the cgroup kernfs root
 *    has no KERNFS_ROOT_EXTRA_OPEN_PERM_CHECK and CAP_DAC_OVERRIDE passes
 *    the mode, so the open succeeds; cgroup_file_write() finds no write
 *    method and returns EINVAL;
 *  - the root cgroup: the soft limit is CFTYPE_NOT_ON_ROOT, so opening it
 *    there for writing fails with ENOENT;
 *  - uid 65534: the open fails with EACCES (the files are root's, 0644 and
 *    0444).
 *
 * toptier-test: topology=2tier timeout=180 debug=yes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

#define SOFT	"memory.toptier_soft_limit_in_bytes"
#define USAGE	"memory.toptier_usage_in_bytes"

/*
 * "\n" is the empty value: it is what echo "" writes, and a zero-length
 * write never reaches a kernfs handler (cgroup_file_write() returns 0 for
 * it).  Values above the page counter range are clamped to unlimited, as in
 * memory.limit_in_bytes, so "huge" here means beyond 64 bits.  Hex and octal
 * ("0x10", "010") are not bad values: memparse() parses base 0, as for
 * every v1 limit file.
 */
static const char *const bad[] = {
	"\n",				/* empty */
	"-2", "-1K", "--1",		/* negative; "-1" alone is unlimited */
	"abc", "max", "G",		/* garbage, the v2 word, a unit alone */
	"99999999999999999999",		/* more than 64 bits */
	"16E",				/* 2^64 once the suffix applies */
	"5x", "5 5", "5KB",		/* trailing junk */
	"1.5G", "+5",			/* fraction, sign */
};

/* ---- what each case leaves behind, undone by cleanup() -------------------- */
static struct holder *holder;
static char *cgroup;

static char *mkcg(const char *name)
{
	cgroup = cg_create(cg1_root(), name);
	return cgroup;
}

static void cleanup(void)
{
	holder_stop(holder);
	holder = NULL;
	cg_destroy(cgroup);
	free(cgroup);
	cgroup = NULL;
}

/* ---- helpers ---------------------------------------------------------------- */
/* What v1 limit files read when unlimited: PAGE_COUNTER_MAX pages. */
static long long unlimited(void)
{
	return LLONG_MAX / page_size * page_size;
}

/* A value as the messages show it, with "\n" spelled out. */
static const char *shown(const char *val)
{
	return strcmp(val, "\n") ? val : "\\n";
}

/* What a write_once() of val did, for the messages. */
static const char *outcome(int r, const char *val)
{
	static char buf[64];

	if (r < 0)
		snprintf(buf, sizeof(buf), "failed with %s", strerrorname_np(-r));
	else if ((size_t)r == strlen(val))
		snprintf(buf, sizeof(buf), "was accepted");
	else
		snprintf(buf, sizeof(buf), "was partly accepted (%d of %zu bytes)", r, strlen(val));
	return buf;
}

/* Write val to cg's file once: refused with want, and the file still reads before. */
static enum tt_result refused(const char *cg, const char *file, const char *val, int want,
			      long long before)
{
	char path[512];
	long long after;
	int r;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	r = write_once(path, val);
	after = read_ll(path);
	TT_EXPECT(r == -want, "%s: \"%s\" %s, want %s; it reads %lld, was %lld", file, shown(val),
		  outcome(r, val), strerrorname_np(want), after, before);
	TT_EXPECT(after == before, "%s: after \"%s\" it reads %lld, was %lld", file, shown(val),
		  after, before);
	return TT_PASS;
}

/* ---- cases ------------------------------------------------------------------ */
static enum tt_result test_root(void)
{
	const char *root = cg1_root();
	char path[512];
	int r;

	TT_EXPECT(root, "no cgroup v1 memory hierarchy");
	snprintf(path, sizeof(path), "%s/%s", root, SOFT);
	r = write_once(path, "1G");
	TT_EXPECT(r == -ENOENT, "the root cgroup's %s: writing 1G %s, want ENOENT", SOFT,
		  outcome(r, "1G"));
	return TT_PASS;
}

static enum tt_result soft_body(void)
{
	const long long set = 100LL << 20;
	char *cg = mkcg("tt_bad_soft");
	int failed = 0, err;

	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(cg_read_ll(cg, SOFT) == unlimited(), "default %lld, want unlimited %lld",
		  cg_read_ll(cg, SOFT), unlimited());
	err = cg_write(cg, SOFT, "100M");
	TT_EXPECT(err == 0 && cg_read_ll(cg, SOFT) == set, "cannot set 100M: %s, reads %lld",
		  strerror(-err), cg_read_ll(cg, SOFT));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (refused(cg, SOFT, bad[i], EINVAL, set) == TT_PASS)
			continue;
		failed++;
		cg_write(cg, SOFT, "100M");	/* the next value starts from it again */
	}
	TT_EXPECT(failed == 0, "%d of %zu bad values were not refused", failed, ARRAY_SIZE(bad));
	return TT_PASS;
}

/* The open succeeds; the write finds no handler. */
static enum tt_result usage_body(void)
{
	char *cg = mkcg("tt_bad_usage");
	char path[512];
	enum tt_result r;
	int err;

	TT_EXPECT(cg, "cannot create the cgroup");
	r = refused(cg, USAGE, "0", EINVAL, 0);
	if (r != TT_PASS)
		return r;
	/* The root's usage moves on its own: the errno, and that it still reads. */
	snprintf(path, sizeof(path), "%s/%s", cg1_root(), USAGE);
	err = write_once(path, "0");
	TT_EXPECT(err == -EINVAL, "the root's %s: \"0\" %s, want EINVAL", USAGE,
		  outcome(err, "0"));
	TT_EXPECT(read_ll(path) >= 0, "the root's %s reads %lld", USAGE, read_ll(path));
	return TT_PASS;
}

static int nobody_write(void *arg)
{
	const char *const *w = arg;

	return write_once(w[0], w[1]);
}

/*
 * uid 65534 writing val, a valid value, to cg's file is refused with EACCES
 * and, when the file does not move on its own (stable), changes nothing.
 */
static enum tt_result nobody_refused(const char *cg, const char *file, const char *val,
				     bool stable)
{
	char path[512];
	const char *w[2] = { path, val };
	long long before, after;
	int r;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	before = read_ll(path);
	r = as_nobody(nobody_write, w);
	after = read_ll(path);
	TT_EXPECT(r != INT_MIN, "no child running as uid 65534");
	TT_EXPECT(r == -EACCES, "%s: uid 65534 writing \"%s\" %s, want EACCES", path, val,
		  outcome(r, val));
	TT_EXPECT(!stable || after == before,
		  "%s: after uid 65534 wrote \"%s\" it reads %lld, was %lld", path, val, after,
		  before);
	return TT_PASS;
}

static enum tt_result nobody_body(void)
{
	char *cg = mkcg("tt_bad_nobody");
	enum tt_result r;

	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(cg_write(cg, SOFT, "100M") == 0, "cannot set 100M");
	r = nobody_refused(cg, SOFT, "1G", true);
	if (r == TT_PASS)
		r = nobody_refused(cg, USAGE, "0", true);
	if (r == TT_PASS)
		r = nobody_refused(cg1_root(), USAGE, "0", false);
	return r;
}

static enum tt_result reads_body(void)
{
	char *cg = mkcg("tt_bad_reads");
	long long usage;

	TT_EXPECT(cg, "cannot create the cgroup");
	holder = holder_start(cg, 16 * MB, 6, false);
	TT_EXPECT(holder, "no holder");
	usage = cg_read_ll(cg, USAGE);
	TT_EXPECT(usage >= 15 * (long long)MB, "%s is %lld with 16 MB held", USAGE, usage);
	TT_EXPECT(cg_read_ll(cg1_root(), USAGE) >= usage, "the root's %s %lld, the child's %lld",
		  USAGE, cg_read_ll(cg1_root(), USAGE), usage);
	TT_EXPECT(cg_read_ll(cg, SOFT) == unlimited(), "%s is %lld", SOFT, cg_read_ll(cg, SOFT));
	TT_EXPECT(cg_write(cg, SOFT, "1G") == 0 && cg_read_ll(cg, SOFT) == 1LL << 30,
		  "1G reads back as %lld", cg_read_ll(cg, SOFT));
	TT_EXPECT(cg_write(cg, SOFT, "-1") == 0 && cg_read_ll(cg, SOFT) == unlimited(),
		  "-1 reads back as %lld", cg_read_ll(cg, SOFT));
	if (page_size == 4096)
		TT_EXPECT(cg_read_ll(cg, SOFT) == 9223372036854771712LL, "unlimited reads %lld",
			  cg_read_ll(cg, SOFT));
	TT_EXPECT(file_key("/proc/meminfo", "TopTierTotal") > 0, "/proc/meminfo TopTierTotal %lld",
		  file_key("/proc/meminfo", "TopTierTotal"));
	return TT_PASS;
}

TT_WITH_CLEANUP(test_soft, soft_body(), cleanup)
TT_WITH_CLEANUP(test_usage, usage_body(), cleanup)
TT_WITH_CLEANUP(test_nobody, nobody_body(), cleanup)
TT_WITH_CLEANUP(test_reads, reads_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "soft_limit_absent_on_root_cgroup", test_root },
		{ "soft_limit_refuses_bad_values", test_soft },
		{ "usage_refuses_writes_on_root_and_child", test_usage },
		{ "unprivileged_writes_refused", test_nobody },
		{ "toptier_reads_work_after_bad_writes", test_reads },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

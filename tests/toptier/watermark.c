// SPDX-License-Identifier: GPL-2.0
/*
 * The toptier watermark: every zone of a top-tier node gets
 *	toptier = clamp(managed * vm.toptier_scale_factor / 10000, 2 * high, managed)
 * pages, shown in /proc/zoneinfo after "promo".  The sysctl defaults to
 * 2000, accepts 1..10000, recomputes the watermarks when written and
 * refuses anything else with EINVAL, changing nothing.
 *
 * toptier-test: topology=2tier timeout=120
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

#define SCALE_FACTOR	"/proc/sys/vm/toptier_scale_factor"
#define DEFAULT_FACTOR	2000

static long long expected(long long managed, long long factor, long long high)
{
	long long v = managed * factor / 10000;

	/* clamp(): the upper bound wins should 2 * high exceed managed. */
	if (v < 2 * high)
		v = 2 * high;
	return v > managed ? managed : v;
}

/*
 * "high" in zoneinfo includes the watermark boost; the toptier watermark is
 * computed from the unboosted one.  Boosts are rare on an idle guest, and
 * either reading of the spec is accepted while one is active.
 */
static bool zone_matches(const struct tt_zone *z, long long factor)
{
	long long high = z->high - (z->boost > 0 ? z->boost : 0);

	return z->toptier == expected(z->managed, factor, high) ||
	       (z->boost > 0 && (z->toptier == expected(z->managed, factor, z->high) ||
				 z->toptier == expected(z->managed, factor, high) + z->boost));
}

/* Every populated zone of the top-tier node0 follows the formula. */
static enum tt_result check_formula(long long factor)
{
	struct tt_zone zones[TT_MAX_ZONES];
	int n = zoneinfo_read(zones, TT_MAX_ZONES), checked = 0;

	TT_EXPECT(read_ll(SCALE_FACTOR) == factor, "%s reads %lld, want %lld",
		  SCALE_FACTOR, read_ll(SCALE_FACTOR), factor);
	TT_EXPECT(n > 0, "cannot parse /proc/zoneinfo (%d)", n);
	for (int i = 0; i < n; i++) {
		const struct tt_zone *z = &zones[i];

		if (z->node != 0 || z->managed <= 0)
			continue;
		tt_diag("factor %lld: node0 %s managed %lld high %lld boost %lld toptier %lld, want %lld",
			factor, z->name, z->managed, z->high, z->boost, z->toptier,
			expected(z->managed, factor, z->high - z->boost));
		TT_EXPECT(z->toptier >= 0, "node0 %s has no toptier line", z->name);
		TT_EXPECT(zone_matches(z, factor), "node0 %s: toptier %lld is not the formula's",
			  z->name, z->toptier);
		checked++;
	}
	TT_EXPECT(checked > 0, "node0 has no populated zone in /proc/zoneinfo");
	return TT_PASS;
}

static enum tt_result set_and_check(long long factor)
{
	char val[32];
	int err;

	snprintf(val, sizeof(val), "%lld", factor);
	err = write_text(SCALE_FACTOR, val);
	TT_EXPECT(err == 0, "writing %s to %s: %s", val, SCALE_FACTOR, strerror(-err));
	return check_formula(factor);
}

static enum tt_result test_default(void)
{
	TT_EXPECT(path_exists(SCALE_FACTOR), "no %s", SCALE_FACTOR);
	TT_EXPECT(read_ll(SCALE_FACTOR) == DEFAULT_FACTOR, "default is %lld, want %d",
		  read_ll(SCALE_FACTOR), DEFAULT_FACTOR);
	return TT_PASS;
}

/* Each zone prints "        toptier  N" right after its promo line. */
static enum tt_result test_zoneinfo_line(void)
{
	static char buf[1 << 18];
	int zones = 0, lines = 0;
	bool after_promo = false;
	char *line, *save;

	TT_EXPECT(read_text("/proc/zoneinfo", buf, sizeof(buf)) > 0, "cannot read zoneinfo");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "Node ", 5))
			zones++;
		if (after_promo) {
			char *end;

			TT_EXPECT(!strncmp(line, "        toptier  ", 17),
				  "zone %d: \"%s\" follows the promo line", zones, line);
			strtoll(line + 17, &end, 10);
			TT_EXPECT(end > line + 17 && !*end, "zone %d: bad line \"%s\"", zones, line);
			lines++;
		}
		after_promo = !strncmp(line, "        promo ", 14);
	}
	tt_diag("%d zones, %d toptier lines", zones, lines);
	TT_EXPECT(zones > 0 && lines == zones, "%d toptier lines for %d zones", lines, zones);
	return TT_PASS;
}

static enum tt_result test_formula_default(void)
{
	return check_formula(DEFAULT_FACTOR);
}

static enum tt_result test_500(void)
{
	return set_and_check(500);
}

/* The smallest factor: 2 * high is the floor. */
static enum tt_result test_1(void)
{
	return set_and_check(1);
}

/* The largest: the whole zone. */
static enum tt_result test_10000(void)
{
	return set_and_check(10000);
}

static bool same_watermarks(const struct tt_zone *a, const struct tt_zone *b)
{
	/* The boost comes and goes on its own; the watermarks under it do not. */
	return a->node == b->node && a->managed == b->managed &&
	       a->min - a->boost == b->min - b->boost &&
	       a->low - a->boost == b->low - b->boost &&
	       a->high - a->boost == b->high - b->boost &&
	       (a->toptier == b->toptier || a->toptier - a->boost == b->toptier - b->boost);
}

static enum tt_result test_out_of_range(void)
{
	static const char *const bad[] = { "0", "10001", "-1", "abc" };
	struct tt_zone before[TT_MAX_ZONES], after[TT_MAX_ZONES];
	enum tt_result r;
	int n;

	/* Not the default, so that "reset to default" cannot pass for "kept". */
	r = set_and_check(500);
	if (r != TT_PASS)
		return r;
	n = zoneinfo_read(before, TT_MAX_ZONES);
	TT_EXPECT(n > 0, "cannot parse /proc/zoneinfo");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err = write_text(SCALE_FACTOR, bad[i]);

		TT_EXPECT(err == -EINVAL, "writing \"%s\" gave %s, want EINVAL", bad[i],
			  err ? strerror(-err) : "success");
		TT_EXPECT(read_ll(SCALE_FACTOR) == 500, "after \"%s\" the factor is %lld",
			  bad[i], read_ll(SCALE_FACTOR));
		TT_EXPECT(zoneinfo_read(after, TT_MAX_ZONES) == n, "the zones changed");
		for (int z = 0; z < n; z++)
			TT_EXPECT(same_watermarks(&before[z], &after[z]),
				  "after \"%s\" node%d %s watermarks changed (toptier %lld -> %lld)",
				  bad[i], after[z].node, after[z].name, before[z].toptier,
				  after[z].toptier);
	}
	return check_formula(500);
}

static enum tt_result test_restore(void)
{
	return set_and_check(DEFAULT_FACTOR);
}

int main(void)
{
	static const struct tt_case cases[] = {
		{ "scale_factor_defaults_to_2000", test_default },
		{ "zoneinfo_prints_toptier_after_promo", test_zoneinfo_line },
		{ "default_watermarks_follow_formula", test_formula_default },
		{ "factor_500_recomputes_watermarks", test_500 },
		{ "factor_1_floors_at_twice_high", test_1 },
		{ "factor_10000_is_whole_zone", test_10000 },
		{ "out_of_range_refused_nothing_changes", test_out_of_range },
		{ "restore_default_2000", test_restore },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

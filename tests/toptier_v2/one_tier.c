// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tiers.* on a machine with one memory tier: every file lists the
 * tiers but the slowest, so each is empty; a write naming the one tier is
 * an unknown tier (EINVAL) and changes nothing; a cgroup that uses memory
 * has nothing counted, demoted or refused.
 *
 * toptier-test: topology=1tier timeout=120
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt.h"

#define LEN	(64 * MB)

static const char *const files[] = {
	"memory.tiers.current", "memory.tiers.peak", "memory.tiers.low",
	"memory.tiers.high", "memory.tiers.max", "memory.tiers.events",
};

static char *cg;

static void cleanup(void)
{
	if (cg) {
		cg_destroy(cg);
		free(cg);
		cg = NULL;
	}
}

/* Every file of the cgroup reads as zero bytes. */
static bool all_empty(const char *when)
{
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char path[512], buf[256];
		int n;

		snprintf(path, sizeof(path), "%s/%s", cg, files[i]);
		n = read_text(path, buf, sizeof(buf));
		if (n != 0) {
			tt_diag("%s %s: %s", when, files[i],
				n < 0 ? "cannot be read" : buf);
			return false;
		}
	}
	return true;
}

static enum tt_result empty_body(void)
{
	struct tt_tier tiers[TT_MAX_TIERS];
	int ntiers = tiers_read(tiers, TT_MAX_TIERS);
	char line[64];

	TT_EXPECT(ntiers == 1, "premise: %d memory tiers hold memory, want 1", ntiers);
	cg = cg_create(cg2_root(), "tt_v2_one_tier");
	TT_EXPECT(cg, "cannot create the cgroup");
	TT_EXPECT(all_empty("new cgroup:"), "a file of a new cgroup is not empty");

	/* The one tier is the slowest: it has no line to write. */
	for (size_t i = 2; i < 5; i++) {
		int err;

		snprintf(line, sizeof(line), "%d 1M", tiers[0].key);
		err = cg_write(cg, files[i], line);
		TT_EXPECT(err == -EINVAL, "writing \"%s\" to %s gave %s, want EINVAL", line,
			  files[i], err ? strerror(-err) : "success");
		err = cg_write(cg, files[i], "junk");
		TT_EXPECT(err == -EINVAL, "writing junk to %s gave %s, want EINVAL", files[i],
			  err ? strerror(-err) : "success");
	}
	TT_EXPECT(all_empty("after the writes:"), "a refused write changed a file");

	/* A cgroup using memory has nothing counted in any line. */
	TT_EXPECT(write_file_from(cg, "/tmp/tt_one_tier", LEN) == 0,
		  "cannot write the file from the cgroup");
	TT_EXPECT(cg_read_ll(cg, "memory.current") >= (long long)LEN / 2,
		  "premise: the cgroup's page cache is not charged (%lld bytes)",
		  cg_read_ll(cg, "memory.current"));
	TT_EXPECT(all_empty("with 64M charged:"), "a file is not empty with memory charged");
	TT_EXPECT(cg_read_key(cg, "memory.stat", "pgdemote_tierlimit") == 0,
		  "pgdemote_tierlimit is %lld", cg_read_key(cg, "memory.stat", "pgdemote_tierlimit"));
	TT_EXPECT(cg_read_key(cg, "memory.stat", "pgpromote_tierlimit_denied") == 0,
		  "pgpromote_tierlimit_denied is %lld",
		  cg_read_key(cg, "memory.stat", "pgpromote_tierlimit_denied"));
	unlink("/tmp/tt_one_tier");
	return TT_PASS;
}
TT_WITH_CLEANUP(test_empty, empty_body(), cleanup)

int main(void)
{
	static const struct tt_case cases[] = {
		{ "one_tier_files_empty_and_writes_refused", test_empty },
	};

	return tt_run(cases, ARRAY_SIZE(cases));
}

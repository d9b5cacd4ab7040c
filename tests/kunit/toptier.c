// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel KUnit tests of the series (mm/toptier_kunit.c) run at
 * boot.  This reads their KTAP from debugfs and reports every test case as
 * one TAP result, so the runner counts them with the rest.  A suite that
 * is missing (kernel built without CONFIG_TOPTIER_KUNIT_TEST) or that ran
 * no case is a failure, not a skip.
 *
 * toptier-test: topology=2tier timeout=120
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

static const char *const suites[] = { "toptier_parse", "toptier_wmark", "toptier_limit" };

#define MAX_RESULTS	256

struct result {
	bool ok, skip;
	char name[160];
	char diag[1024];	/* the failure messages KUnit logged */
};

static struct result results[MAX_RESULTS];
static int nresults;

static struct result *add(bool ok, const char *name)
{
	struct result *r;

	if (nresults == MAX_RESULTS)
		return NULL;
	r = &results[nresults++];
	r->ok = ok;
	snprintf(r->name, sizeof(r->name), "%s", name);
	return r;
}

/*
 * The debugfs file holds the suite as a KTAP subtest: its cases are the
 * lines "    ok N name" or "    not ok N name", each after its own
 * "    # ..." diagnostics; the last line is the suite's own result.
 */
static void read_suite(const char *suite)
{
	char path[256], line[512], pending[1024] = "", full[160];
	int cases = 0, plan = -1;
	bool suite_ok = false, suite_seen = false, failed = false;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/kunit/%s/results", suite);
	f = fopen(path, "r");
	if (!f) {
		struct result *r = add(false, suite);

		if (r)
			snprintf(r->diag, sizeof(r->diag),
				 "no %s: the suite is not in this kernel", path);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[128];
		int n;

		line[strcspn(line, "\n")] = '\0';
		/* sscanf() spaces match any white space: compare prefixes. */
		if (!strncmp(line, "    1..", 7)) {
			plan = atoi(line + 7);
		} else if (!strncmp(line, "    # ", 6) && strncmp(line, "    # Subtest", 13)) {
			size_t len = strlen(pending);

			snprintf(pending + len, sizeof(pending) - len, "%s\n", line + 6);
		} else if (!strncmp(line, "    ", 4) && line[4] != ' ' &&
			   (sscanf(line + 4, "ok %d %127s", &n, name) == 2 ||
			    sscanf(line + 4, "not ok %d %127s", &n, name) == 2)) {
			struct result *r;

			snprintf(full, sizeof(full), "%s.%s", suite, name);
			r = add(!strncmp(line, "    ok", 6), full);
			if (r) {
				r->skip = strstr(line, "# SKIP") != NULL;
				failed |= !r->ok;
				snprintf(r->diag, sizeof(r->diag), "%s", pending);
			}
			pending[0] = '\0';
			cases++;
		} else if (line[0] != ' ' &&
			   (sscanf(line, "ok %d %127s", &n, name) == 2 ||
			    sscanf(line, "not ok %d %127s", &n, name) == 2)) {
			suite_seen = true;
			suite_ok = !strncmp(line, "ok", 2);
		}
	}
	fclose(f);
	/* A suite that failed with every case passing failed in its init or exit. */
	if (!suite_seen || cases == 0 || cases != plan || (!suite_ok && !failed)) {
		struct result *r = add(false, suite);

		if (r)
			snprintf(r->diag, sizeof(r->diag),
				 "suite %s: %d cases for a plan of %d, suite result %s",
				 suite, cases, plan, suite_seen ? (suite_ok ? "ok" : "not ok") : "missing");
	}
}

int main(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++)
		read_suite(suites[i]);

	printf("TAP version 13\n1..%d\n", nresults);
	for (int i = 0; i < nresults; i++) {
		struct result *r = &results[i];
		char *line;

		for (line = strtok(r->diag, "\n"); line; line = strtok(NULL, "\n"))
			printf("# %s\n", line);
		printf("%sok %d %s%s\n", r->ok ? "" : "not ", i + 1, r->name,
		       r->skip ? " # SKIP" : "");
	}
	for (int i = 0; i < nresults; i++)
		if (!results[i].ok)
			return 1;
	return 0;
}

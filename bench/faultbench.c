// SPDX-License-Identifier: GPL-2.0
/*
 * Page-fault throughput inside a three-level cgroup hierarchy (v1, or v2
 * with toptier.fault_cg=v2 on the kernel command line), for bench/run.sh.
 * Several processes fault in anonymous memory and tmpfs pages in a loop,
 * first with no top-tier limit anywhere, then with limits set on all
 * three levels, high enough never to be enforced, so that what is
 * measured is the bookkeeping: the v1 soft limit, or the fastest tier's
 * line of v2 memory.tiers.high and .max.  Prints one line per phase:
 *   BENCH bench=fault cg=<v1|v2> rep=<n> phase=<nolimit|limit> workload=<anon|tmpfs> faults_per_s=<n>
 * The phases alternate REPS times.  On a kernel without the series the
 * limit phase is skipped.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt.h"

#define NPROC		4
#define CHUNK		(32 * MB)
#define SECONDS		2.0
#define REPS		3
#define LIMIT_FILE_V1	"memory.toptier_soft_limit_in_bytes"

struct shared {
	long faults[NPROC];
};

static void fault_loop(int idx, bool tmpfs, struct shared *sh)
{
	double deadline = now_s() + SECONDS;
	char path[64];
	long n = 0;
	int fd = -1;

	if (tmpfs) {
		snprintf(path, sizeof(path), "/tmp/faultbench.%d", idx);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, CHUNK))
			exit(1);
	}
	while (now_s() < deadline) {
		char *p = tmpfs ? mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
				: map_anon(CHUNK);

		if (p == MAP_FAILED || !p)
			exit(1);
		for (size_t off = 0; off < CHUNK; off += page_size)
			p[off] = 1;
		n += CHUNK / page_size;
		munmap(p, CHUNK);
		/* Give the tmpfs pages back so every pass faults anew. */
		if (tmpfs && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, CHUNK))
			exit(1);
	}
	if (tmpfs)
		unlink(path);
	sh->faults[idx] = n;
}

static double run(const char *cg, bool tmpfs, struct shared *sh)
{
	pid_t pids[NPROC];
	double t0 = now_s();
	long total = 0;

	for (int i = 0; i < NPROC; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			if (cg_attach(cg, getpid()))
				_exit(1);
			fault_loop(i, tmpfs, sh);
			_exit(0);
		}
	}
	for (int i = 0; i < NPROC; i++)
		if (wait_child(pids[i]))
			return -1;
	for (int i = 0; i < NPROC; i++)
		total += sh->faults[i];
	return total / (now_s() - t0);
}

/*
 * Set or clear the limits of the three levels: v1 soft limit, or v2 high
 * and max on the line of tier top (the fastest tier's key).  Non-zero if a
 * write failed: the phase would measure nothing.
 */
static int set_limits(char *const cg[3], bool v2, int top, bool on)
{
	static const char *const val[3] = { "64G", "32G", "16G" };
	int err = 0;

	for (int i = 0; i < 3; i++) {
		if (!v2) {
			err |= cg_write(cg[i], LIMIT_FILE_V1, on ? val[i] : "-1");
			continue;
		}
		err |= cg_tier_write(cg[i], "memory.tiers.high", top, on ? val[i] : "max");
		err |= cg_tier_write(cg[i], "memory.tiers.max", top, on ? val[i] : "max");
	}
	return err;
}

int main(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char cmdline[4096] = "", path[512];
	struct tt_tier tiers[TT_MAX_TIERS];
	bool has_limits, v2;
	const char *root;
	char *cg[3];
	int top = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	/* toptier.fault_cg=v2 on the kernel command line: cgroup v2. */
	read_text("/proc/cmdline", cmdline, sizeof(cmdline));
	v2 = strstr(cmdline, "toptier.fault_cg=v2");
	root = v2 ? cg2_root() : cg1_root();
	if (!root)
		return 1;
	cg[0] = cg_create(root, "bench");
	cg[1] = cg[0] ? cg_create(cg[0], "mid") : NULL;
	if (v2 && cg[1] && (cg_write(cg[0], "cgroup.subtree_control", "+memory") ||
			    cg_write(cg[1], "cgroup.subtree_control", "+memory")))
		return 1;
	cg[2] = cg[1] ? cg_create(cg[1], "leaf") : NULL;
	if (!cg[2])
		return 1;
	snprintf(path, sizeof(path), "%s/%s", cg[0], v2 ? "memory.tiers.max" : LIMIT_FILE_V1);
	has_limits = path_exists(path);
	/*
	 * With one memory tier there is no line to limit: the machine the
	 * series must leave alone, measured without limits only.
	 */
	if (tiers_read(tiers, TT_MAX_TIERS) < 2) {
		printf("# faultbench: one memory tier, no limit phase\n");
		has_limits = false;
	} else if (has_limits && v2) {
		top = tiers[0].key;
	}
	printf("# faultbench: cgroup %s, %d processes, limits %s\n", v2 ? "v2" : "v1", NPROC,
	       has_limits ? "available" : "absent");
	/* Warm-up pass, not reported: first faults of a fresh boot are slower. */
	run(cg[2], false, sh);
	/*
	 * Alternate the phases within the boot, so that their ratio is not
	 * swamped by the boot-to-boot noise of an emulated machine.
	 */
	for (int rep = 0; rep < REPS; rep++) {
		for (int phase = 0; phase < 2; phase++) {
			const char *name = phase ? "limit" : "nolimit";

			if (!has_limits && phase)
				break;
			if (has_limits && set_limits(cg, v2, top, phase)) {
				printf("BENCH-ERROR cannot set the limits\n");
				return 1;
			}
			printf("BENCH bench=fault cg=%s rep=%d phase=%s workload=anon faults_per_s=%.0f\n",
			       v2 ? "v2" : "v1", rep, name, run(cg[2], false, sh));
			printf("BENCH bench=fault cg=%s rep=%d phase=%s workload=tmpfs faults_per_s=%.0f\n",
			       v2 ? "v2" : "v1", rep, name, run(cg[2], true, sh));
		}
	}
	return 0;
}

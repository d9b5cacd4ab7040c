// SPDX-License-Identifier: GPL-2.0
/*
 * Page-fault throughput inside a three-level cgroup v1 hierarchy, for
 * bench/run.sh.  Several processes fault in anonymous memory and tmpfs
 * pages in a loop, first with no top-tier soft limit anywhere, then with
 * limits set on all three levels (high enough never to be enforced, so
 * what is measured is the bookkeeping).  Prints one line per phase:
 *   BENCH bench=fault rep=<n> phase=<nolimit|limit> workload=<anon|tmpfs> faults_per_s=<n>
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
#define LIMIT_FILE	"memory.toptier_soft_limit_in_bytes"

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

int main(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const char *root = cg1_root();
	char *a, *b, *c;
	bool has_limits;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	a = cg_create(root, "bench");
	b = cg_create(a, "mid");
	c = cg_create(b, "leaf");
	if (!c)
		return 1;
	has_limits = path_exists("/sys/fs/cgroup/memory/bench/" LIMIT_FILE);
	/* Warm-up pass, not reported: first faults of a fresh boot are slower. */
	run(c, false, sh);
	/*
	 * Alternate the phases within the boot, so that their ratio is not
	 * swamped by the boot-to-boot noise of an emulated machine.
	 */
	for (int rep = 0; rep < REPS; rep++) {
		for (int phase = 0; phase < 2; phase++) {
			const char *name = phase ? "limit" : "nolimit";

			if (!has_limits && phase)
				break;
			if (has_limits) {
				cg_write(a, LIMIT_FILE, phase ? "64G" : "-1");
				cg_write(b, LIMIT_FILE, phase ? "32G" : "-1");
				cg_write(c, LIMIT_FILE, phase ? "16G" : "-1");
			}
			printf("BENCH bench=fault rep=%d phase=%s workload=anon faults_per_s=%.0f\n",
			       rep, name, run(c, false, sh));
			printf("BENCH bench=fault rep=%d phase=%s workload=tmpfs faults_per_s=%.0f\n",
			       rep, name, run(c, true, sh));
		}
	}
	return 0;
}

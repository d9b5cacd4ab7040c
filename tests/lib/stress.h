/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stress engine (lib/stress.c) and what each cgroup version gives it:
 * reliability/stress_v2.c and stress_v1.c fill a struct stress_ops and
 * call stress_main().
 */
#ifndef STRESS_H
#define STRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How far a usage may be from memory.numa_stat (lib/stress.c says why). */
#define TOL		(4LL * (long long)MB)

/* Seeded randomness: the parent's decisions repeat for a seed. */
struct rng {
	uint64_t s;
};

uint64_t rnd(struct rng *r);
uint64_t rnd_below(struct rng *r, uint64_t n);

struct stress_ops {
	const char *name;		/* "v2", "v1" */
	const char *(*root)(void);
	/* Make cg able to have child cgroups with the memory controller. */
	int (*enable_children)(const char *cg);
	/*
	 * Compare cg's top-tier usage with memory.numa_stat over the top-tier
	 * nodes once: true when consistent; *usage gets the usage in bytes,
	 * *ref what numa_stat says it should be, why what was read.
	 */
	bool (*check)(const char *cg, long long *usage, long long *ref, char *why, size_t len);
	/* The cgroup's top-tier usage in bytes (LLONG_MIN: unreadable). */
	long long (*usage)(const char *cg);
	/* Rewrite one limit of cg at random: 0, or -errno on an unexpected
	 * failure (described in why). */
	int (*rewrite)(const char *cg, struct rng *r, char *why, size_t len);
	/* Called before a worker is moved into cg (v1: charge moving). */
	void (*before_attach)(const char *cg, struct rng *r);
	/* Called before a new worker joins cg from the root cgroup. */
	void (*before_spawn)(const char *cg);
	/* Teardown: the parent holds nothing any more (exact, polled). */
	bool (*parent_empty)(const char *cg, char *why, size_t len);
};

/*
 * memory.numa_stat's entries names[] summed over the top-tier nodes (v2:
 * bytes, v1: pages), from one read: cg_numa_stat_sum() of those nodes;
 * LLONG_MIN when unreadable or a name is missing.
 */
long long numa_stat_toptier(const char *cg, const char *const *names, int nnames);

/* Run the stress test with ops; the test program's exit status. */
int stress_main(const struct stress_ops *ops);

#endif

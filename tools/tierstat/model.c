// SPDX-License-Identifier: GPL-2.0
/* tierstat: the model: names, cgroup order, snapshots and rates. */
#define _GNU_SOURCE
#include "tierstat.h"

const char *const ctr_names[NCTR] = {
	[CTR_DEMOTE_KSWAPD] = "pgdemote_kswapd",
	[CTR_DEMOTE_DIRECT] = "pgdemote_direct",
	[CTR_DEMOTE_KHUGEPAGED] = "pgdemote_khugepaged",
	[CTR_PROMOTE] = "pgpromote_success",
	[CTR_TL_DEMOTE] = "pgdemote_tierlimit",
	[CTR_TL_DENIED] = "pgpromote_tierlimit_denied",
};
const char *const tf_names[NTF] = {
	"current", "peak", "low", "high", "max",
};
const char *const tev_names[NTEV] = { "low", "high", "max", "fallback" };
const char *const vm_prefixes[4] = {
	"pgdemote_", "pgpromote_", "numa_", "pgmigrate_",
};
const char *const sort_names[6] = {
	"name", "toptier", "lower", "usage", "demote", "promote",
};

/* ---- sorting ---- */

static uint64_t sort_key(const struct cg *c, int f)
{
	uint64_t v = 0;

	switch (f) {
	case SORT_TOPTIER:
		return c->top;
	case SORT_LOWER:
		return c->lower;
	case SORT_USAGE:
		return c->usage;
	case SORT_DEMOTE:
		for (int i = 0; i < 3; i++)
			if (c->ctr[i] != NA)
				v += c->ctr[i];
		return v;
	case SORT_PROMOTE:
		return c->ctr[CTR_PROMOTE];
	}
	return 0;
}

/* path order with '/' before any other character: subtrees stay together */
static int cmp_path(const char *a, const char *b)
{
	for (; *a && *a == *b; a++, b++)
		;
	if (*a == *b)
		return 0;
	if (!*a || *a == '/')
		return *b ? -1 : 1;
	if (!*b || *b == '/')
		return 1;
	return (unsigned char)*a - (unsigned char)*b;
}

/* Each cgroup's path and sort key, in strcmp order of the paths, for
 * cmp_cg()'s lookups of ancestors while qsort() moves the cgroups. */
struct pathkey {
	const char *path;
	uint64_t key;		/* NA counts as 0 */
};
static struct pathkey *by_path;
static int nby_path;

static int cmp_pathkey(const void *pa, const void *pb)
{
	return strcmp(((const struct pathkey *)pa)->path, ((const struct pathkey *)pb)->path);
}

/* The entry of the cgroup whose path is the first len bytes of path. */
static const struct pathkey *ancestor(const char *path, size_t len)
{
	int lo = 0, hi = nby_path - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, r = strncmp(by_path[mid].path, path, len);

		if (!r)
			r = by_path[mid].path[len] ? 1 : 0;
		if (!r)
			return &by_path[mid];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* Descending by the sort field; 0 when equal or unknown. */
static int cmp_key(const struct pathkey *a, const struct pathkey *b)
{
	if (o.sort == SORT_NAME || !a || !b || a->key == b->key)
		return 0;
	return a->key > b->key ? -1 : 1;
}

/*
 * Tree order: a parent before its children, and siblings by the sort
 * field (then by name), each followed by its own subtree, as
 * systemd-cgtop keeps them.  Two paths are compared at the first
 * component where they differ, by the cgroups those prefixes name.
 */
static int cmp_cg(const void *pa, const void *pb)
{
	const char *a = ((const struct cg *)pa)->path, *b = ((const struct cg *)pb)->path;
	size_t i = 0;

	for (;;) {
		size_t la = i + strcspn(a + i, "/"), lb = i + strcspn(b + i, "/");
		int r;

		if (!a[i] || !b[i])	/* one is the other's ancestor */
			return !a[i] ? (b[i] ? -1 : 0) : 1;
		if (la != lb || strncmp(a + i, b + i, la - i)) {
			r = cmp_key(ancestor(a, la), ancestor(b, lb));
			return r ? r : cmp_path(a + i, b + i);
		}
		if (!a[la] || !b[lb])
			return !a[la] ? (b[lb] ? -1 : 0) : 1;
		i = la + 1;
	}
}

/* Sort a snapshot's cgroups in tree order (cmp_cg). */
static void sort_cgroups(struct snap *sn)
{
	by_path = xmalloc((sn->ncgs + 1) * sizeof(*by_path));
	for (int i = 0; i < sn->ncgs; i++) {
		uint64_t k = o.sort == SORT_NAME ? 0 : sort_key(&sn->cgs[i], o.sort);

		by_path[i] = (struct pathkey){ sn->cgs[i].path, k == NA ? 0 : k };
	}
	nby_path = sn->ncgs;
	qsort(by_path, nby_path, sizeof(*by_path), cmp_pathkey);
	qsort(sn->cgs, sn->ncgs, sizeof(*sn->cgs), cmp_cg);
	free(by_path);
	by_path = NULL;
	nby_path = 0;
}

/* ---- snapshots and rates ---- */

double secs(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

static double rate(uint64_t old, uint64_t now, double dt)
{
	if (old == NA || now == NA || now < old || dt <= 0)
		return NAN;
	return (now - old) / dt;
}

void take(struct snap *sn, const struct snap *prev)
{
	memset(sn, 0, sizeof(*sn));
	clock_gettime(CLOCK_MONOTONIC, &sn->mono);
	clock_gettime(CLOCK_REALTIME, &sn->real);
	read_topology(sn);
	read_vmstat(sn);
	read_cgroups(sn);
	if (sn->ncgs)
		sort_cgroups(sn);
	if (!prev)
		return;

	double dt = secs(&prev->mono, &sn->mono);

	for (int i = 0; i < sn->nvm; i++)
		for (int j = 0; j < prev->nvm; j++)
			if (!strcmp(sn->vm[i].name, prev->vm[j].name))
				sn->vm[i].rate = rate(prev->vm[j].val, sn->vm[i].val, dt);
	for (int i = 0; i < sn->ncgs; i++)
		for (int j = 0; j < prev->ncgs; j++) {
			if (strcmp(sn->cgs[i].path, prev->cgs[j].path))
				continue;
			for (size_t k = 0; k < NCTR; k++)
				sn->cgs[i].rate[k] = rate(prev->cgs[j].ctr[k],
							  sn->cgs[i].ctr[k], dt);
		}
}

void release(struct snap *sn)
{
	for (int i = 0; i < sn->ntiers; i++)
		free(sn->tiers[i].nodes);
	for (int i = 0; i < sn->nvm; i++)
		free(sn->vm[i].name);
	for (int i = 0; i < sn->ncgs; i++) {
		free(sn->cgs[i].path);
		free(sn->cgs[i].tl);
		free(sn->cgs[i].node_bytes);
	}
	free(sn->tiers);
	free(sn->nodes);
	free(sn->vm);
	free(sn->cgs);
}

/* Total minus free, or NA when either is unknown or they disagree. */
uint64_t used_of(uint64_t total, uint64_t free)
{
	return total == NA || free == NA || free > total ? NA : total - free;
}

/* A cgroup's path as every output shows it: "/a/b", "/" for the root
 * (malloc()ed). */
char *cg_path(const struct cg *c)
{
	return xasprintf("/%s", c->path);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * tierstat: memory tiers, nodes, per-cgroup top-tier usage, limits and
 * demotion/promotion counters, like systemd-cgtop for tiered memory.
 *
 * Works on kernels with and without the toptier series: what the kernel
 * does not provide is computed (top-tier usage from memory.numa_stat and
 * the memory_tiering node lists) or shown as "-" (limits, new counters).
 * On cgroup v2 the top tier's usage and limits are the fastest tier's
 * line of memory.tiers.{current,low,high,max}.
 * See tierstat.1 for the options and the JSON keys.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MAX_NODES	1024
#define MAX_TLINES	16	/* lines of memory.tiers.* a column group each */
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_FILE	(4 << 20)
#define NA		UINT64_MAX		/* value not available */
#define UNLIMITED	(UINT64_MAX - 1)	/* limit "max" / v1 -1 */
#define V1_UNLIMITED	9223372036854771712ULL

#define TIERSTAT_VERSION	"0.4"
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

/* memory.stat counters shown per cgroup, in this order */
enum { CTR_DEMOTE_KSWAPD, CTR_DEMOTE_DIRECT, CTR_DEMOTE_KHUGEPAGED, CTR_PROMOTE,
       CTR_TL_DEMOTE, CTR_TL_DENIED, NCTR };
static const char *const ctr_names[NCTR] = {
	[CTR_DEMOTE_KSWAPD] = "pgdemote_kswapd",
	[CTR_DEMOTE_DIRECT] = "pgdemote_direct",
	[CTR_DEMOTE_KHUGEPAGED] = "pgdemote_khugepaged",
	[CTR_PROMOTE] = "pgpromote_success",
	[CTR_TL_DEMOTE] = "pgdemote_tierlimit",
	[CTR_TL_DENIED] = "pgpromote_tierlimit_denied",
};

/*
 * cgroup v2 memory.tiers.* files: one "N value" line per memory tier but
 * the slowest, each value cumulative over tier N and every faster tier.
 */
enum { TF_CURRENT, TF_PEAK, TF_LOW, TF_HIGH, TF_MAX, NTF };
static const char *const tf_names[NTF] = {
	"current", "peak", "low", "high", "max",
};
/* keys of memory.tiers.events lines ("N low=n high=n max=n fallback=n") */
static const char *const tev_names[] = { "low", "high", "max", "fallback" };
#define NTEV (sizeof(tev_names) / sizeof(tev_names[0]))

/* /proc/vmstat keys shown: these prefixes */
static const char *const vm_prefixes[] = {
	"pgdemote_", "pgpromote_", "numa_", "pgmigrate_",
};

struct opts {
	const char *sysfs, *procfs, *cgroupfs;
	double delay;
	long count;
	bool bytes, json, prom, headers, colour, batch;
	int depth;		/* --depth: deepest level shown, -1 for all */
	const char *output;	/* -o: the file each snapshot replaces */
	int sort;
	char **cgroups;
	int ncgroups;
};

enum { SORT_NAME, SORT_TOPTIER, SORT_LOWER, SORT_USAGE, SORT_DEMOTE,
       SORT_PROMOTE };
static const char *const sort_names[] = {
	"name", "toptier", "lower", "usage", "demote", "promote",
};

struct tier {
	int id;
	int nnodes;
	int *nodes;
	uint64_t total, free;	/* bytes, NA if unknown */
};

struct node {
	int id;
	int tier;		/* tier id, -1 if in no tier */
	bool top;
	uint64_t total, free;	/* bytes, NA if unknown */
};

/* one line of the memory.tiers.* files: values up to tier `tier`, NA if unknown */
struct tline {
	int tier;
	uint64_t val[NTF];
	uint64_t ev[NTEV];
};

struct cg {
	char *path;		/* relative to the root, "" for the root */
	uint64_t usage, top, lower;
	bool top_kernel;	/* top from the kernel, not computed */
	uint64_t low, high, max, soft;	/* v2: the fastest tier's line */
	struct tline *tl;	/* v2 memory.tiers.* lines, fastest first */
	int ntl;
	uint64_t ctr[NCTR];
	double rate[NCTR];	/* NAN when no previous sample */
	uint64_t *node_bytes;	/* memory.numa_stat per node, MAX_NODES; NULL if unknown */
};

struct vmkey {
	char *name;
	uint64_t val;
	double rate;
};

struct snap {
	struct timespec mono, real;
	struct tier *tiers;
	int ntiers;
	struct node *nodes;
	int nnodes;
	bool top[MAX_NODES];
	const char *top_source;
	struct vmkey *vm;
	int nvm;
	struct cg *cgs;
	int ncgs;
};

static struct opts o = { .count = -1, .sort = SORT_NAME, .depth = -1 };
static int cg_version;		/* 1 or 2 */
static char *cg_root;
static uint64_t page_size;

static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("tierstat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		die(EXIT_RUNTIME, "out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die(EXIT_RUNTIME, "out of memory");
	return p;
}

static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		die(EXIT_RUNTIME, "out of memory");
	return s;
}

/* Whole file as a NUL-terminated string, NULL if unreadable. */
static char *read_all(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	buf = xmalloc(cap);
	for (;;) {
		size_t n = fread(buf + len, 1, cap - len - 1, f);

		len += n;
		if (n == 0 || len >= MAX_FILE)
			break;
		if (len + 1 == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[len] = 0;
	return buf;
}

static char *read_path(const char *fmt, ...)
{
	va_list ap;
	char *path, *s;

	va_start(ap, fmt);
	if (vasprintf(&path, fmt, ap) < 0)
		die(EXIT_RUNTIME, "out of memory");
	va_end(ap);
	s = read_all(path);
	free(path);
	return s;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists_in(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	bool r = access(p, F_OK) == 0;

	free(p);
	return r;
}

/* Unsigned decimal at s (no sign, no blanks); *endp is where it ends. */
static bool parse_u64(const char *s, const char **endp, uint64_t *v)
{
	unsigned long long x;
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno)
		return false;
	*v = x;
	if (endp)
		*endp = end;
	return true;
}

/* Single number file ("123\n"); "max" gives UNLIMITED when allow_max. */
static uint64_t read_u64_file(const char *dir, const char *name, bool allow_max)
{
	char *s = read_path("%s/%s", dir, name);
	uint64_t v = NA;
	const char *p, *end;

	if (!s)
		return NA;
	for (p = s; isspace((unsigned char)*p); p++)
		;
	if (allow_max && !strncmp(p, "max", 3) &&
	    (!p[3] || isspace((unsigned char)p[3])))
		v = UNLIMITED;
	else if (parse_u64(p, &end, &v)) {
		while (isspace((unsigned char)*end))
			end++;
		if (*end)
			v = NA;
	} else {
		v = NA;
	}
	free(s);
	return v;
}

/*
 * Node list "0-1,3" into set[]; returns the number of nodes, -1 if
 * malformed.  An empty list is valid.
 */
static int parse_nodelist(const char *s, bool *set)
{
	int n = 0;

	memset(set, 0, MAX_NODES * sizeof(*set));
	while (isspace((unsigned char)*s))
		s++;
	while (*s && *s != '\n') {
		uint64_t a, b;
		const char *e;

		if (!parse_u64(s, &e, &a) || a >= MAX_NODES)
			return -1;
		b = a;
		if (*e == '-') {
			if (!parse_u64(e + 1, &e, &b) || b < a || b >= MAX_NODES)
				return -1;
		}
		for (uint64_t i = a; i <= b; i++) {
			if (!set[i])
				n++;
			set[i] = true;
		}
		if (*e == ',')
			e++;
		else if (*e && !isspace((unsigned char)*e))
			return -1;
		s = e;
		while (*s == ' ' || *s == '\t')
			s++;
	}
	return n;
}

/* "key value" lines (memory.stat, /proc/vmstat): value of key or NA. */
static uint64_t kv_get(const char *buf, const char *key)
{
	size_t kl = strlen(key);
	const char *p = buf, *e;
	uint64_t v;

	while (p && *p) {
		if (!strncmp(p, key, kl) && (p[kl] == ' ' || p[kl] == '\t')) {
			const char *q = p + kl;

			while (*q == ' ' || *q == '\t')
				q++;
			if (parse_u64(q, &e, &v) && (!*e || isspace((unsigned char)*e)))
				return v;
			return NA;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NA;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* ---- tiers and nodes ---- */

static void node_meminfo(const char *sysfs, struct node *nd)
{
	char *s = read_path("%s/devices/system/node/node%d/meminfo", sysfs, nd->id);
	char *line, *save = NULL;

	nd->total = nd->free = NA;
	if (!s)
		return;
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int id, off = 0;
		char key[64];
		const char *e;
		uint64_t v;

		if (sscanf(line, "Node %d %63[^:]:%n", &id, key, &off) < 2 || !off ||
		    id != nd->id)
			continue;
		line += off;
		while (*line == ' ' || *line == '\t')
			line++;
		if (!parse_u64(line, &e, &v) || (*e && !isspace((unsigned char)*e)) ||
		    v > UINT64_MAX / 2048)
			continue;
		if (!strcmp(key, "MemTotal"))
			nd->total = v * 1024;
		else if (!strcmp(key, "MemFree"))
			nd->free = v * 1024;
	}
	free(s);
}

static void read_topology(struct snap *sn)
{
	char *nodedir = xasprintf("%s/devices/system/node", o.sysfs);
	char *tierdir = xasprintf("%s/devices/virtual/memory_tiering", o.sysfs);
	static bool has[MAX_NODES], set[MAX_NODES];
	int tier_of[MAX_NODES];
	struct dirent *de;
	DIR *d;
	char *s;

	d = opendir(nodedir);
	if (!d)
		die(EXIT_RUNTIME, "cannot read %s: %s (is sysfs mounted? see --sysfs)",
		    nodedir, strerror(errno));
	memset(has, 0, sizeof(has));
	for (int i = 0; i < MAX_NODES; i++)
		tier_of[i] = -1;
	while ((de = readdir(d))) {
		uint64_t id;
		const char *e;

		if (!strncmp(de->d_name, "node", 4) &&
		    parse_u64(de->d_name + 4, &e, &id) && !*e && id < MAX_NODES)
			has[id] = true;
	}
	closedir(d);

	d = opendir(tierdir);	/* absent without CONFIG_NUMA: no tiers */
	while (d && (de = readdir(d))) {
		uint64_t id;
		const char *e;
		struct tier *t;
		int n;

		if (strncmp(de->d_name, "memory_tier", 11) ||
		    !parse_u64(de->d_name + 11, &e, &id) || *e || id > INT_MAX)
			continue;
		s = read_path("%s/%s/nodelist", tierdir, de->d_name);
		n = s ? parse_nodelist(s, set) : -1;
		free(s);
		if (n < 0) {
			fprintf(stderr, "tierstat: warning: %s/%s/nodelist missing or malformed\n",
				tierdir, de->d_name);
			n = 0;
			memset(set, 0, sizeof(set));
		}
		sn->tiers = xrealloc(sn->tiers, (sn->ntiers + 1) * sizeof(*sn->tiers));
		t = &sn->tiers[sn->ntiers++];
		t->id = (int)id;
		t->nnodes = 0;
		t->nodes = xmalloc(n * sizeof(int));
		for (int i = 0; i < MAX_NODES; i++) {
			if (!set[i])
				continue;
			t->nodes[t->nnodes++] = i;
			has[i] = true;
			tier_of[i] = t->id;
		}
	}
	if (d)
		closedir(d);
	if (sn->ntiers)
		qsort(sn->tiers, sn->ntiers, sizeof(*sn->tiers), cmp_int); /* id first */

	for (int i = 0; i < MAX_NODES; i++) {
		struct node *nd;

		if (!has[i])
			continue;
		sn->nodes = xrealloc(sn->nodes, (sn->nnodes + 1) * sizeof(*sn->nodes));
		nd = &sn->nodes[sn->nnodes++];
		nd->id = i;
		nd->tier = tier_of[i];
		node_meminfo(o.sysfs, nd);
	}

	/* the top tier: is_toptier, else the lowest tier id with nodes */
	memset(sn->top, 0, sizeof(sn->top));
	s = read_path("%s/is_toptier", nodedir);
	if (s && parse_nodelist(s, set) > 0) {
		memcpy(sn->top, set, sizeof(sn->top));
		sn->top_source = "is_toptier";
	} else {
		for (int i = 0; i < sn->ntiers; i++) {
			if (!sn->tiers[i].nnodes)
				continue;
			for (int j = 0; j < sn->tiers[i].nnodes; j++)
				sn->top[sn->tiers[i].nodes[j]] = true;
			sn->top_source = "memory_tiering";
			break;
		}
		if (!sn->top_source) {
			for (int i = 0; i < sn->nnodes; i++)
				sn->top[sn->nodes[i].id] = true;
			sn->top_source = "all_nodes";
		}
	}
	free(s);
	for (int i = 0; i < sn->nnodes; i++)
		sn->nodes[i].top = sn->top[sn->nodes[i].id];

	for (int i = 0; i < sn->ntiers; i++) {
		struct tier *t = &sn->tiers[i];

		t->total = t->free = t->nnodes ? 0 : NA;
		for (int j = 0; j < t->nnodes; j++) {
			for (int k = 0; k < sn->nnodes; k++) {
				struct node *nd = &sn->nodes[k];

				if (nd->id != t->nodes[j])
					continue;
				t->total = (nd->total == NA || t->total == NA) ? NA : t->total + nd->total;
				t->free = (nd->free == NA || t->free == NA) ? NA : t->free + nd->free;
			}
		}
	}
	free(nodedir);
	free(tierdir);
}

/* ---- /proc/vmstat ---- */

static void read_vmstat(struct snap *sn)
{
	char *path = xasprintf("%s/vmstat", o.procfs);
	char *s = read_all(path), *line, *save = NULL;

	if (!s)
		die(EXIT_RUNTIME, "cannot read %s: %s (is procfs mounted? see --procfs)",
		    path, strerror(errno));
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strpbrk(line, " \t");
		bool want = false;
		const char *e;
		uint64_t v;

		if (!sp)
			continue;
		for (size_t i = 0; i < sizeof(vm_prefixes) / sizeof(*vm_prefixes); i++)
			want |= !strncmp(line, vm_prefixes[i], strlen(vm_prefixes[i]));
		*sp++ = 0;
		while (*sp == ' ' || *sp == '\t')
			sp++;
		if (!want || !parse_u64(sp, &e, &v) || (*e && !isspace((unsigned char)*e)))
			continue;
		sn->vm = xrealloc(sn->vm, (sn->nvm + 1) * sizeof(*sn->vm));
		sn->vm[sn->nvm].name = strdup(line);
		sn->vm[sn->nvm].val = v;
		sn->vm[sn->nvm].rate = NAN;
		sn->nvm++;
	}
	free(s);
	free(path);
}

/* ---- cgroups ---- */

static bool v2_root(const char *dir)
{
	return exists_in(dir, "cgroup.controllers");
}

static bool v1_root(const char *dir)
{
	return exists_in(dir, "memory.usage_in_bytes") ||
	       exists_in(dir, "memory.numa_stat");
}

static void find_cgroup_root(void)
{
	const char *env = getenv("TIERSTAT_CGROUPFS");
	char *cand[3];

	if (!o.cgroupfs && env && *env)
		o.cgroupfs = env;
	if (o.cgroupfs) {
		if (!is_dir(o.cgroupfs))
			die(EXIT_RUNTIME, "cgroupfs %s: %s", o.cgroupfs,
			    errno ? strerror(errno) : "not a directory");
		cg_root = strdup(o.cgroupfs);
		if (v2_root(cg_root))
			cg_version = 2;
		else if (v1_root(cg_root))
			cg_version = 1;
		else
			die(EXIT_RUNTIME, "%s is neither a cgroup v2 root (no cgroup.controllers) nor a cgroup v1 memory hierarchy (no memory.usage_in_bytes)",
			    cg_root);
		return;
	}
	cand[0] = xasprintf("%s/fs/cgroup", o.sysfs);
	cand[1] = xasprintf("%s/fs/cgroup/memory", o.sysfs);
	cand[2] = xasprintf("%s/fs/cgroup/unified", o.sysfs);
	if (v2_root(cand[0]))
		cg_version = 2, cg_root = cand[0];
	else if (v1_root(cand[1]))
		cg_version = 1, cg_root = cand[1];
	else if (v2_root(cand[2]))
		cg_version = 2, cg_root = cand[2];
	else
		die(EXIT_RUNTIME, "no cgroup filesystem found: %s is not cgroup2 and neither %s (v1 memory) nor %s (cgroup2) exists; mount one or use --cgroupfs",
		    cand[0], cand[1], cand[2]);
}

/* top-tier and lower-tier bytes of a cgroup from memory.numa_stat */
static void numa_usage(const char *dir, const bool *top, uint64_t *tp, uint64_t *lp,
		       uint64_t **nodes)
{
	static const char *const v1_keys[] = { "hierarchical_total", "total" };
	static const char *const v2_lru[] = { "inactive_anon", "active_anon",
		"inactive_file", "active_file", "unevictable" };
	static const char *const v2_fallback[] = { "anon", "file" };
	char *s = read_path("%s/memory.numa_stat", dir);
	uint64_t t = 0, l = 0, *per = xmalloc(MAX_NODES * sizeof(*per));
	bool bad = false, found = false;

	*tp = *lp = NA;
	*nodes = NULL;
	memset(per, 0, MAX_NODES * sizeof(*per));
	if (!s) {
		free(per);
		return;
	}
	for (int pass = 0; pass < 2 && !found; pass++) {
		const char *p = s;

		while (p && *p) {
			const char *eol = strchr(p, '\n'), *q;
			size_t klen = strcspn(p, " =\t\n");
			bool want = false;
			uint64_t mult = 1;

			if (cg_version == 1) {
				want = p[klen] == '=' && strlen(v1_keys[pass]) == klen &&
				       !strncmp(p, v1_keys[pass], klen);
				mult = page_size;
			} else {
				const char *const *keys = pass ? v2_fallback : v2_lru;
				size_t nk = pass ? 2 : 5;

				for (size_t i = 0; i < nk; i++)
					want |= strlen(keys[i]) == klen && !strncmp(p, keys[i], klen);
			}
			if (want && cg_version == 1 && found)
				want = false;	/* first matching line only */
			if (want) {
				found = true;
				/* skip "key=value" (v1 total) or "key" (v2) */
				q = p + klen;
				if (*q == '=')
					while (*q && !isspace((unsigned char)*q))
						q++;
				for (;;) {
					uint64_t node, v;
					const char *e;

					while (*q == ' ' || *q == '\t')
						q++;
					if (!*q || *q == '\n')
						break;
					if (*q != 'N' || !parse_u64(q + 1, &e, &node) || *e != '=' ||
					    !parse_u64(e + 1, &e, &v) || node >= MAX_NODES ||
					    (*e && !isspace((unsigned char)*e)) ||
					    v > UINT64_MAX / mult / 4) {
						bad = true;
						break;
					}
					if (top[node])
						t += v * mult;
					else
						l += v * mult;
					per[node] += v * mult;
					q = e;
				}
			}
			p = eol ? eol + 1 : NULL;
		}
	}
	free(s);
	if (found && !bad) {
		*tp = t;
		*lp = l;
		*nodes = per;
	} else {
		free(per);
	}
}

static struct tline *tline_of(struct cg *c, int tier)
{
	struct tline *t;

	for (int i = 0; i < c->ntl; i++)
		if (c->tl[i].tier == tier)
			return &c->tl[i];
	c->tl = xrealloc(c->tl, (c->ntl + 1) * sizeof(*c->tl));
	t = &c->tl[c->ntl++];
	t->tier = tier;
	for (int i = 0; i < NTF; i++)
		t->val[i] = NA;
	for (size_t i = 0; i < NTEV; i++)
		t->ev[i] = NA;
	return t;
}

static int cmp_tline(const void *a, const void *b)
{
	return cmp_int(&((const struct tline *)a)->tier, &((const struct tline *)b)->tier);
}

/*
 * One line of a memory.tiers.* file into *t: "N value" (f < NTF; "max"
 * allowed for the limits) or "N low=n high=n max=n fallback=n" (f == NTF,
 * unknown keys ignored).  false if malformed.
 */
static bool parse_tiers_line(const char *p, int f, struct tline *t)
{
	const char *e;
	uint64_t id, v;

	for (int i = 0; i < NTF; i++)
		t->val[i] = NA;
	for (size_t i = 0; i < NTEV; i++)
		t->ev[i] = NA;
	if (!parse_u64(p, &e, &id) || id > INT_MAX || (*e != ' ' && *e != '\t'))
		return false;
	t->tier = (int)id;
	while (*e == ' ' || *e == '\t')
		e++;
	if (f < NTF) {
		if (f >= TF_LOW && !strncmp(e, "max", 3)) {
			v = UNLIMITED;
			e += 3;
		} else if (!parse_u64(e, &e, &v)) {
			return false;
		}
		while (*e == ' ' || *e == '\t')
			e++;
		t->val[f] = v;
		return !*e;
	}
	if (!*e)
		return false;	/* no counts at all */
	while (*e) {
		size_t kl = strcspn(e, "= \t");

		if (!kl || e[kl] != '=' || !parse_u64(e + kl + 1, &p, &v) ||
		    (*p && *p != ' ' && *p != '\t'))
			return false;
		for (size_t i = 0; i < NTEV; i++)
			if (strlen(tev_names[i]) == kl && !strncmp(e, tev_names[i], kl))
				t->ev[i] = v;
		for (e = p; *e == ' ' || *e == '\t'; e++)
			;
	}
	return true;
}

/*
 * A memory.tiers.* file of dir (field f, NTF for .events) into c->tl.  A
 * file that is missing, or has a malformed line or a tier twice, is left
 * out as a whole.
 */
static void read_tiers_file(struct cg *c, const char *dir, int f)
{
	char *s = read_path("%s/memory.tiers.%s", dir, f < NTF ? tf_names[f] : "events");
	char *line, *save = NULL;
	struct tline *lines = NULL;
	bool bad = false;
	int n = 0;

	if (!s)
		return;
	for (line = strtok_r(s, "\n", &save); line && !bad; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line)
			continue;
		lines = xrealloc(lines, (n + 1) * sizeof(*lines));
		bad = !parse_tiers_line(line, f, &lines[n]);
		for (int i = 0; i < n && !bad; i++)
			bad = lines[i].tier == lines[n].tier;
		n++;
	}
	for (int i = 0; i < n && !bad; i++) {
		struct tline *t = tline_of(c, lines[i].tier);

		if (f < NTF)
			t->val[f] = lines[i].val[f];
		else
			memcpy(t->ev, lines[i].ev, sizeof(t->ev));
	}
	free(lines);
	free(s);
}

static void read_cgroup(struct cg *c, const bool *top)
{
	char *dir = *c->path ? xasprintf("%s/%s", cg_root, c->path) : strdup(cg_root);
	char *stat = read_path("%s/memory.stat", dir);
	uint64_t nt, nl;

	numa_usage(dir, top, &nt, &nl, &c->node_bytes);
	c->lower = nl;
	c->low = c->high = c->max = c->soft = NA;
	if (cg_version == 1) {
		c->usage = read_u64_file(dir, "memory.usage_in_bytes", false);
		c->top = read_u64_file(dir, "memory.toptier_usage_in_bytes", false);
		c->soft = read_u64_file(dir, "memory.toptier_soft_limit_in_bytes", false);
		if (c->soft != NA && c->soft >= V1_UNLIMITED)
			c->soft = UNLIMITED;
	} else {
		c->usage = read_u64_file(dir, "memory.current", false);
		for (int f = 0; f <= NTF; f++)
			read_tiers_file(c, dir, f);
		if (c->ntl)
			qsort(c->tl, c->ntl, sizeof(*c->tl), cmp_tline);
		/* the top tier's usage and limits: the fastest tier's line */
		c->top = c->ntl ? c->tl[0].val[TF_CURRENT] : NA;
		if (c->ntl) {
			c->low = c->tl[0].val[TF_LOW];
			c->high = c->tl[0].val[TF_HIGH];
			c->max = c->tl[0].val[TF_MAX];
		}
	}
	c->top_kernel = c->top != NA;
	if (!c->top_kernel)
		c->top = nt;
	for (size_t i = 0; i < NCTR; i++) {
		uint64_t v = NA;

		if (stat && cg_version == 1) {
			char *k = xasprintf("total_%s", ctr_names[i]);

			v = kv_get(stat, k);
			free(k);
		}
		if (stat && v == NA)
			v = kv_get(stat, ctr_names[i]);
		c->ctr[i] = v;
		c->rate[i] = NAN;
	}
	free(stat);
	free(dir);
}

static bool is_cgroup_dir(const char *dir)
{
	return cg_version == 2 ? exists_in(dir, "cgroup.controllers") ||
				 exists_in(dir, "cgroup.procs")
			       : v1_root(dir) || exists_in(dir, "cgroup.procs");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk(struct snap *sn, const char *rel)
{
	char *dir = *rel ? xasprintf("%s/%s", cg_root, rel) : strdup(cg_root);
	char **names = NULL;
	int n = 0;
	struct dirent *de;
	DIR *d;

	for (int i = 0; i < sn->ncgs; i++)	/* overlapping arguments */
		if (!strcmp(sn->cgs[i].path, rel))
			goto out;
	if (o.depth >= 0) {	/* --depth: levels below the root */
		int depth = *rel ? 1 : 0;

		for (const char *p = rel; *p; p++)
			depth += *p == '/';
		if (depth > o.depth)
			goto out;
	}
	sn->cgs = xrealloc(sn->cgs, (sn->ncgs + 1) * sizeof(*sn->cgs));
	memset(&sn->cgs[sn->ncgs], 0, sizeof(*sn->cgs));
	sn->cgs[sn->ncgs].path = strdup(rel);
	read_cgroup(&sn->cgs[sn->ncgs], sn->top);
	sn->ncgs++;

	d = opendir(dir);
	while (d && (de = readdir(d))) {
		char *sub;

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		sub = xasprintf("%s/%s", dir, de->d_name);
		if (is_dir(sub) && is_cgroup_dir(sub)) {
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = strdup(de->d_name);
		}
		free(sub);
	}
	if (d)
		closedir(d);	/* before recursing: deep trees, few fds */
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (int i = 0; i < n; i++) {
		char *child = *rel ? xasprintf("%s/%s", rel, names[i]) : strdup(names[i]);

		walk(sn, child);
		free(child);
		free(names[i]);
	}
	free(names);
out:
	free(dir);
}

/* "a//b/" -> "a/b", "/" -> ""; NULL if it contains "." or ".." parts */
static char *normalise(const char *arg)
{
	char *out = xmalloc(strlen(arg) + 1), *w = out;
	const char *p = arg;

	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (!len)
			break;
		if ((len == 1 && p[0] == '.') || (len == 2 && !strncmp(p, "..", 2))) {
			free(out);
			return NULL;
		}
		if (w != out)
			*w++ = '/';
		memcpy(w, p, len);
		w += len;
		p += len;
	}
	*w = 0;
	return out;
}

static void read_cgroups(struct snap *sn)
{
	if (!o.ncgroups) {
		walk(sn, "");
		return;
	}
	for (int i = 0; i < o.ncgroups; i++) {
		char *rel = normalise(o.cgroups[i]), *dir;

		if (!rel)
			die(EXIT_USAGE, "bad cgroup path '%s': no '.' or '..' components",
			    o.cgroups[i]);
		dir = *rel ? xasprintf("%s/%s", cg_root, rel) : strdup(cg_root);
		if (!is_dir(dir) || (*rel && !is_cgroup_dir(dir)))
			die(EXIT_RUNTIME, "unknown cgroup '%s' (no cgroup at %s)",
			    o.cgroups[i], dir);
		walk(sn, rel);
		free(dir);
		free(rel);
	}
}

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

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

static double rate(uint64_t old, uint64_t now, double dt)
{
	if (old == NA || now == NA || now < old || dt <= 0)
		return NAN;
	return (now - old) / dt;
}

static void take(struct snap *sn, const struct snap *prev)
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

static void release(struct snap *sn)
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
static uint64_t used_of(uint64_t total, uint64_t free)
{
	return total == NA || free == NA || free > total ? NA : total - free;
}

/* A cgroup's path as every output shows it: "/a/b", "/" for the root
 * (malloc()ed). */
static char *cg_path(const struct cg *c)
{
	return xasprintf("/%s", c->path);
}

/* ---- human output ---- */

/* The live view's limit on the CGROUP column (0: none); longer paths keep
 * their end. */
static int path_width;

/* A sorted node list as ranges, "0-3,8" (malloc()ed); "-" when empty. */
static char *node_ranges(const int *nodes, int n)
{
	size_t cap = 16 + (size_t)n * 12, len = 0;
	char *buf = xmalloc(cap);

	buf[0] = 0;
	for (int i = 0; i < n;) {
		int j = i;

		while (j + 1 < n && nodes[j + 1] == nodes[j] + 1)
			j++;
		if (j > i)
			len += snprintf(buf + len, cap - len, "%s%d-%d", len ? "," : "",
					nodes[i], nodes[j]);
		else
			len += snprintf(buf + len, cap - len, "%s%d", len ? "," : "", nodes[i]);
		i = j + 1;
	}
	if (!len)
		strcpy(buf, "-");
	return buf;
}

static const char *fmt_bytes(uint64_t v, char *buf, size_t n)
{
	static const char units[] = "KMGTPE";
	double x = v;
	int u = -1;

	if (v == NA)
		return "-";
	if (v == UNLIMITED)
		return "max";
	if (o.bytes || v < 1024) {
		snprintf(buf, n, o.bytes ? "%llu" : "%lluB", (unsigned long long)v);
		return buf;
	}
	while (x >= 1024 && u < 5) {
		x /= 1024;
		u++;
	}
	snprintf(buf, n, "%.1f%c", x, units[u]);
	return buf;
}

static const char *fmt_count(uint64_t v, char *buf, size_t n)
{
	if (v == NA)
		return "-";
	snprintf(buf, n, "%llu", (unsigned long long)v);
	return buf;
}

static const char *fmt_rate(double r, char *buf, size_t n)
{
	if (isnan(r))
		return "-";
	snprintf(buf, n, "%.1f", r);
	return buf;
}

static void header(FILE *out, const char *fmt, ...)
{
	va_list ap;

	if (!o.headers)
		return;
	if (o.colour)
		fputs("\033[1m", out);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	if (o.colour)
		fputs("\033[0m", out);
	fputc('\n', out);
}

static void sum3(const uint64_t *v, uint64_t *out)
{
	*out = NA;
	for (int i = 0; i < 3; i++)
		if (v[i] != NA)
			*out = (*out == NA ? 0 : *out) + v[i];
}

static double sum3r(const double *r)
{
	double s = NAN;

	for (int i = 0; i < 3; i++)
		if (!isnan(r[i]))
			s = (isnan(s) ? 0 : s) + r[i];
	return s;
}

static void print_human(FILE *out, const struct snap *sn, bool rates)
{
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32], h[32];
	/* byte columns: "1023.9M" in units, up to 20 digits with -b */
	int w = 6, bw = o.bytes ? 20 : 10, tw = 13, nw = 5;
	char **nodes = xmalloc((sn->ntiers + 1) * sizeof(*nodes));

	/* Name columns as wide as their longest entry: memory_tier<id> and
	 * node lists of any length (ranges, "0-3,8"), never cut. */
	for (int i = 0; i < sn->ntiers; i++) {
		int l = snprintf(a, sizeof(a), "memory_tier%d", sn->tiers[i].id);

		nodes[i] = node_ranges(sn->tiers[i].nodes, sn->tiers[i].nnodes);
		if (l > tw)
			tw = l;
		if ((int)strlen(nodes[i]) > nw)
			nw = strlen(nodes[i]);
	}
	header(out, "%-*s %-*s %*s %*s %*s", tw, "TIER", nw, "NODES", bw, "TOTAL", bw, "USED",
	       bw, "FREE");
	for (int i = 0; i < sn->ntiers; i++) {
		const struct tier *t = &sn->tiers[i];
		char name[32];

		snprintf(name, sizeof(name), "memory_tier%d", t->id);
		fprintf(out, "%-*s %-*s %*s %*s %*s\n", tw, name, nw, nodes[i],
		       bw, fmt_bytes(t->total, a, 32),
		       bw, fmt_bytes(used_of(t->total, t->free), b, 32),
		       bw, fmt_bytes(t->free, c, 32));
		free(nodes[i]);
	}
	free(nodes);
	fputc('\n', out);
	header(out, "%-*s %-*s %*s %*s %*s %s", tw, "NODE", tw, "TIER", bw, "TOTAL", bw, "USED",
	       bw, "FREE", "TOPTIER");
	for (int i = 0; i < sn->nnodes; i++) {
		const struct node *nd = &sn->nodes[i];
		char name[32], tier[32];

		snprintf(name, sizeof(name), "node%d", nd->id);
		if (nd->tier >= 0)
			snprintf(tier, sizeof(tier), "memory_tier%d", nd->tier);
		else
			strcpy(tier, "-");
		fprintf(out, "%-*s %-*s %*s %*s %*s %s\n", tw, name, tw, tier,
		       bw, fmt_bytes(nd->total, a, 32),
		       bw, fmt_bytes(used_of(nd->total, nd->free), b, 32),
		       bw, fmt_bytes(nd->free, c, 32), nd->top ? "yes" : "no");
	}
	fputc('\n', out);

	for (int i = 0; i < sn->ncgs; i++) {
		int l = strlen(sn->cgs[i].path) + 1;

		if (l > w)
			w = l;
	}
	if (path_width && w > path_width)
		w = path_width;
	/* v2: a column group per line of memory.tiers.*, fastest first: the
	 * line's value (cumulative: the tier and every faster one), the tier's
	 * own part, its limits and events (low/high/max/fallback). */
	int keys[MAX_TLINES], nkeys = 0;

	for (int i = 0; cg_version == 2 && i < sn->ncgs; i++)
		for (int t = 0; t < sn->cgs[i].ntl; t++) {
			int k = sn->cgs[i].tl[t].tier, at = 0;

			while (at < nkeys && keys[at] < k)
				at++;
			if ((at < nkeys && keys[at] == k) || nkeys == MAX_TLINES)
				continue;
			memmove(keys + at + 1, keys + at, (nkeys - at) * sizeof(*keys));
			keys[at] = k;
			nkeys++;
		}
	if (o.headers) {
		if (o.colour)
			fputs("\033[1m", out);
		fprintf(out, "%-*s %*s %*s %5s %*s", w, "CGROUP", bw, "USAGE", bw, "TOPTIER", "TOP%",
			bw, "LOWER");
		if (cg_version == 1)
			fprintf(out, " %*s", bw, "SOFTLIMIT");
		for (int k = 0; k < nkeys; k++) {
			static const char *const col[] = { "CUR", "IN", "LOW", "HIGH", "MAX" };

			for (size_t c = 0; c < ARRAY_LEN(col); c++) {
				snprintf(a, sizeof(a), "T%d:%s", keys[k], col[c]);
				fprintf(out, " %*s", bw, a);
			}
			snprintf(a, sizeof(a), "T%d:EVENTS", keys[k]);
			fprintf(out, " %14s", a);
		}
		fprintf(out, " %10s %10s %10s %10s%s", "DEMOTE", "PROMOTE", "TLDEMOTE", "TLDENIED",
			rates ? "   DEMOTE/s  PROMOTE/s" : "");
		if (o.colour)
			fputs("\033[0m", out);
		fputc('\n', out);
	}
	for (int i = 0; i < sn->ncgs; i++) {
		const struct cg *cg = &sn->cgs[i];
		char dem[32], *path;
		uint64_t ds, prev = 0;

		sum3(cg->ctr, &ds);
		path = cg_path(cg);
		if ((int)strlen(path) > w && w > 4) {	/* "...", then the end */
			char *cut = xasprintf("...%s", path + strlen(path) - (w - 3));

			free(path);
			path = cut;
		}
		if (cg->top == NA || cg->lower == NA || cg->top + cg->lower == 0)
			strcpy(h, "-");
		else
			snprintf(h, sizeof(h), "%.0f%%",
				 100.0 * cg->top / ((double)cg->top + cg->lower));
		fprintf(out, "%-*s %*s %*s %5s %*s", w, path, bw, fmt_bytes(cg->usage, a, 32),
		       bw, fmt_bytes(cg->top, b, 32), h, bw, fmt_bytes(cg->lower, c, 32));
		if (cg_version == 1)
			fprintf(out, " %*s", bw, fmt_bytes(cg->soft, d, 32));
		for (int k = 0; k < nkeys; k++) {
			const struct tline *tl = NULL;
			uint64_t in = NA;
			char ev[64];

			for (int t = 0; t < cg->ntl; t++)
				if (cg->tl[t].tier == keys[k])
					tl = &cg->tl[t];
			if (!tl) {
				fprintf(out, " %*s %*s %*s %*s %*s %14s", bw, "-", bw, "-", bw, "-",
					bw, "-", bw, "-", "-");
				prev = NA;
				continue;
			}
			if (tl->val[TF_CURRENT] != NA && prev != NA && tl->val[TF_CURRENT] >= prev)
				in = tl->val[TF_CURRENT] - prev;
			prev = tl->val[TF_CURRENT];
			if (tl->ev[0] == NA)
				strcpy(ev, "-");
			else
				snprintf(ev, sizeof(ev), "%llu/%llu/%llu/%llu",
					 (unsigned long long)tl->ev[0], (unsigned long long)tl->ev[1],
					 (unsigned long long)tl->ev[2], (unsigned long long)tl->ev[3]);
			fprintf(out, " %*s %*s %*s %*s %*s %14s", bw,
				fmt_bytes(tl->val[TF_CURRENT], a, 32), bw, fmt_bytes(in, b, 32),
				bw, fmt_bytes(tl->val[TF_LOW], c, 32), bw, fmt_bytes(tl->val[TF_HIGH], d, 32),
				bw, fmt_bytes(tl->val[TF_MAX], e, 32), ev);
		}
		fprintf(out, " %10s %10s %10s %10s", fmt_count(ds, dem, 32),
		       fmt_count(cg->ctr[CTR_PROMOTE], e, 32),
		       fmt_count(cg->ctr[CTR_TL_DEMOTE], f, 32),
		       fmt_count(cg->ctr[CTR_TL_DENIED], g, 32));
		if (rates)
			fprintf(out, " %10s %10s", fmt_rate(sum3r(cg->rate), h, 32),
			       fmt_rate(cg->rate[CTR_PROMOTE], a, 32));
		fputc('\n', out);
		free(path);
	}
	fputc('\n', out);
	header(out, "%-28s %14s%s", "VMSTAT", "COUNT", rates ? "        RATE/s" : "");
	for (int i = 0; i < sn->nvm; i++) {
		fprintf(out, "%-28s %14llu", sn->vm[i].name, (unsigned long long)sn->vm[i].val);
		if (rates)
			fprintf(out, " %13s", fmt_rate(sn->vm[i].rate, a, 32));
		fputc('\n', out);
	}
}

/* ---- JSON output ---- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_u64(uint64_t v)
{
	if (v == NA)
		fputs("null", stdout);
	else if (v == UNLIMITED)
		fputs("\"max\"", stdout);
	else
		printf("%llu", (unsigned long long)v);
}

static void json_rate(double r)
{
	if (isnan(r) || isinf(r))
		fputs("null", stdout);
	else
		printf("%.3f", r);
}

static void print_json(const struct snap *sn, double interval)
{
	printf("{\"version\":3,\"timestamp\":%lld.%03ld,\"interval\":",
	       (long long)sn->real.tv_sec, sn->real.tv_nsec / 1000000);
	json_rate(interval);
	printf(",\"toptier_nodes\":[");
	for (int i = 0, n = 0; i < MAX_NODES; i++)
		if (sn->top[i])
			printf("%s%d", n++ ? "," : "", i);
	printf("],\"toptier_source\":\"%s\",\"tiers\":[", sn->top_source);
	for (int i = 0; i < sn->ntiers; i++) {
		const struct tier *t = &sn->tiers[i];
		bool top = t->nnodes > 0;

		printf("%s{\"tier\":%d,\"nodes\":[", i ? "," : "", t->id);
		for (int j = 0; j < t->nnodes; j++) {
			printf("%s%d", j ? "," : "", t->nodes[j]);
			top &= sn->top[t->nodes[j]];
		}
		printf("],\"toptier\":%s,\"total_bytes\":", top ? "true" : "false");
		json_u64(t->total);
		printf(",\"used_bytes\":");
		json_u64(used_of(t->total, t->free));
		printf(",\"free_bytes\":");
		json_u64(t->free);
		putchar('}');
	}
	printf("],\"nodes\":[");
	for (int i = 0; i < sn->nnodes; i++) {
		const struct node *nd = &sn->nodes[i];

		printf("%s{\"node\":%d,\"tier\":", i ? "," : "", nd->id);
		if (nd->tier >= 0)
			printf("%d", nd->tier);
		else
			fputs("null", stdout);
		printf(",\"toptier\":%s,\"total_bytes\":", nd->top ? "true" : "false");
		json_u64(nd->total);
		printf(",\"used_bytes\":");
		json_u64(used_of(nd->total, nd->free));
		printf(",\"free_bytes\":");
		json_u64(nd->free);
		putchar('}');
	}
	printf("],\"vmstat\":{");
	for (int i = 0; i < sn->nvm; i++) {
		printf("%s", i ? "," : "");
		json_str(sn->vm[i].name);
		printf(":%llu", (unsigned long long)sn->vm[i].val);
	}
	printf("},\"vmstat_rates\":{");
	for (int i = 0; i < sn->nvm; i++) {
		printf("%s", i ? "," : "");
		json_str(sn->vm[i].name);
		putchar(':');
		json_rate(sn->vm[i].rate);
	}
	printf("},\"cgroup_version\":%d,\"cgroup_root\":", cg_version);
	json_str(cg_root);
	printf(",\"cgroups\":[");
	for (int i = 0; i < sn->ncgs; i++) {
		const struct cg *c = &sn->cgs[i];

		char *path = cg_path(c);

		printf("%s{\"path\":", i ? "," : "");
		json_str(path);
		free(path);
		printf(",\"usage_bytes\":");
		json_u64(c->usage);
		printf(",\"toptier_bytes\":");
		json_u64(c->top);
		printf(",\"toptier_source\":%s,\"lower_bytes\":",
		       c->top == NA ? "null" : c->top_kernel ? "\"kernel\"" : "\"numa_stat\"");
		json_u64(c->lower);
		printf(",\"node_bytes\":");
		if (!c->node_bytes) {
			fputs("null", stdout);
		} else {
			putchar('{');
			for (int j = 0; j < sn->nnodes; j++)
				printf("%s\"%d\":%llu", j ? "," : "", sn->nodes[j].id,
				       (unsigned long long)c->node_bytes[sn->nodes[j].id]);
			putchar('}');
		}
		printf(",\"limits\":{\"low\":");
		json_u64(c->low);
		printf(",\"high\":");
		json_u64(c->high);
		printf(",\"max\":");
		json_u64(c->max);
		printf(",\"soft\":");
		json_u64(c->soft);
		printf("},\"counters\":{");
		for (size_t k = 0; k < NCTR; k++) {
			printf("%s\"%s\":", k ? "," : "", ctr_names[k]);
			json_u64(c->ctr[k]);
		}
		printf("},\"counter_rates\":{");
		for (size_t k = 0; k < NCTR; k++) {
			printf("%s\"%s\":", k ? "," : "", ctr_names[k]);
			json_rate(c->rate[k]);
		}
		printf("},\"tiers\":[");
		for (int t = 0; t < c->ntl; t++) {
			const struct tline *tl = &c->tl[t];

			printf("%s{\"tier\":%d", t ? "," : "", tl->tier);
			for (int f = 0; f < NTF; f++) {
				printf(",\"%s%s\":", tf_names[f], f < TF_LOW ? "_bytes" : "");
				json_u64(tl->val[f]);
			}
			printf(",\"events\":{");
			for (size_t k = 0; k < NTEV; k++) {
				printf("%s\"%s\":", k ? "," : "", tev_names[k]);
				if (tl->ev[k] == NA)
					fputs("null", stdout);
				else
					printf("%llu", (unsigned long long)tl->ev[k]);
			}
			printf("}}");
		}
		printf("]}");
	}
	printf("]}\n");
}

/* ---- Prometheus text exposition format ---- */

/* A label value: backslash, double quote and newline escaped. */
static void prom_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP tierstat_%s %s\n# TYPE tierstat_%s %s\n", name, help, name, type);
}

/* One sample; NA leaves it out, UNLIMITED is +Inf.  labels: "k=v" pairs
 * already formatted, or NULL; cgroup: a cgroup path label first, or NULL. */
static void prom_sample(FILE *f, const char *name, const char *cgroup, const char *labels,
			uint64_t v)
{
	if (v == NA)
		return;
	fprintf(f, "tierstat_%s", name);
	if (cgroup || labels) {
		fputc('{', f);
		if (cgroup) {
			fputs("cgroup=\"", f);
			prom_label(f, cgroup);
			fputc('"', f);
		}
		if (labels)
			fprintf(f, "%s%s", cgroup ? "," : "", labels);
		fputc('}', f);
	}
	if (v == UNLIMITED)
		fputs(" +Inf\n", f);
	else
		fprintf(f, " %llu\n", (unsigned long long)v);
}


static void print_prom(FILE *f, const struct snap *sn)
{
	char l[128], **paths = xmalloc((sn->ncgs + 1) * sizeof(*paths));

	for (int i = 0; i < sn->ncgs; i++)
		paths[i] = cg_path(&sn->cgs[i]);
	prom_family(f, "tier_total_bytes", "gauge", "Memory of the nodes of a memory tier.");
	for (int i = 0; i < sn->ntiers; i++) {
		snprintf(l, sizeof(l), "tier=\"%d\"", sn->tiers[i].id);
		prom_sample(f, "tier_total_bytes", NULL, l, sn->tiers[i].total);
	}
	prom_family(f, "tier_free_bytes", "gauge", "Free memory of the nodes of a memory tier.");
	for (int i = 0; i < sn->ntiers; i++) {
		snprintf(l, sizeof(l), "tier=\"%d\"", sn->tiers[i].id);
		prom_sample(f, "tier_free_bytes", NULL, l, sn->tiers[i].free);
	}
	prom_family(f, "node_total_bytes", "gauge", "Memory of a NUMA node.");
	for (int i = 0; i < sn->nnodes; i++) {
		const struct node *nd = &sn->nodes[i];

		snprintf(l, sizeof(l), "node=\"%d\",tier=\"%d\"", nd->id, nd->tier);
		prom_sample(f, "node_total_bytes", NULL, l, nd->total);
	}
	prom_family(f, "node_free_bytes", "gauge", "Free memory of a NUMA node.");
	for (int i = 0; i < sn->nnodes; i++) {
		const struct node *nd = &sn->nodes[i];

		snprintf(l, sizeof(l), "node=\"%d\",tier=\"%d\"", nd->id, nd->tier);
		prom_sample(f, "node_free_bytes", NULL, l, nd->free);
	}
	prom_family(f, "node_toptier", "gauge", "1 if the node is in the top tier.");
	for (int i = 0; i < sn->nnodes; i++) {
		snprintf(l, sizeof(l), "node=\"%d\"", sn->nodes[i].id);
		prom_sample(f, "node_toptier", NULL, l, sn->nodes[i].top);
	}
	prom_family(f, "vmstat_total", "counter", "A /proc/vmstat counter of demotion, promotion, NUMA balancing or migration.");
	for (int i = 0; i < sn->nvm; i++) {
		snprintf(l, sizeof(l), "counter=\"%s\"", sn->vm[i].name);
		prom_sample(f, "vmstat_total", NULL, l, sn->vm[i].val);
	}

	prom_family(f, "cgroup_usage_bytes", "gauge", "memory.current (v2) or memory.usage_in_bytes (v1).");
	for (int i = 0; i < sn->ncgs; i++)
		prom_sample(f, "cgroup_usage_bytes", paths[i], NULL, sn->cgs[i].usage);
	prom_family(f, "cgroup_toptier_bytes", "gauge", "The cgroup's memory on the top tier.");
	for (int i = 0; i < sn->ncgs; i++)
		prom_sample(f, "cgroup_toptier_bytes", paths[i], NULL, sn->cgs[i].top);
	prom_family(f, "cgroup_lower_bytes", "gauge", "The cgroup's memory on the lower tiers (memory.numa_stat).");
	for (int i = 0; i < sn->ncgs; i++)
		prom_sample(f, "cgroup_lower_bytes", paths[i], NULL, sn->cgs[i].lower);
	prom_family(f, "cgroup_node_bytes", "gauge", "The cgroup's memory on a NUMA node (memory.numa_stat).");
	for (int i = 0; i < sn->ncgs; i++)
		for (int j = 0; sn->cgs[i].node_bytes && j < sn->nnodes; j++) {
			snprintf(l, sizeof(l), "node=\"%d\"", sn->nodes[j].id);
			prom_sample(f, "cgroup_node_bytes", paths[i], l,
				    sn->cgs[i].node_bytes[sn->nodes[j].id]);
		}
	prom_family(f, "cgroup_toptier_soft_limit_bytes", "gauge", "cgroup v1 memory.toptier_soft_limit_in_bytes.");
	for (int i = 0; i < sn->ncgs; i++)
		prom_sample(f, "cgroup_toptier_soft_limit_bytes", paths[i], NULL,
			    sn->cgs[i].soft);
	for (int fi = 0; fi < NTF; fi++) {
		char name[64], help[160];

		snprintf(name, sizeof(name), "cgroup_tiers_%s_bytes", tf_names[fi]);
		snprintf(help, sizeof(help), "memory.tiers.%s: the line of a tier, cumulative over it and every faster tier.",
			 tf_names[fi]);
		prom_family(f, name, "gauge", help);
		for (int i = 0; i < sn->ncgs; i++)
			for (int t = 0; t < sn->cgs[i].ntl; t++) {
				snprintf(l, sizeof(l), "tier=\"%d\"", sn->cgs[i].tl[t].tier);
				prom_sample(f, name, paths[i], l, sn->cgs[i].tl[t].val[fi]);
			}
	}
	prom_family(f, "cgroup_tiers_events_total", "counter", "memory.tiers.events of a tier's line.");
	for (int i = 0; i < sn->ncgs; i++)
		for (int t = 0; t < sn->cgs[i].ntl; t++)
			for (size_t k = 0; k < NTEV; k++) {
				snprintf(l, sizeof(l), "tier=\"%d\",event=\"%s\"",
					 sn->cgs[i].tl[t].tier, tev_names[k]);
				prom_sample(f, "cgroup_tiers_events_total", paths[i], l,
					    sn->cgs[i].tl[t].ev[k]);
			}
	prom_family(f, "cgroup_memory_stat_total", "counter", "A demotion or promotion counter of memory.stat, in pages.");
	for (int i = 0; i < sn->ncgs; i++)
		for (size_t k = 0; k < NCTR; k++) {
			snprintf(l, sizeof(l), "counter=\"%s\"", ctr_names[k]);
			prom_sample(f, "cgroup_memory_stat_total", paths[i], l,
				    sn->cgs[i].ctr[k]);
		}
	for (int i = 0; i < sn->ncgs; i++)
		free(paths[i]);
	free(paths);
}

/*
 * -o FILE: the snapshot goes to FILE.<pid>.tmp in the same directory,
 * then rename(2) replaces FILE, so that a reader (node_exporter's textfile
 * collector) never sees half a file.
 */
static void write_atomically(const struct snap *sn)
{
	char *tmp = xasprintf("%s.%ld.tmp", o.output, (long)getpid());
	FILE *f = fopen(tmp, "w");

	if (!f)
		die(EXIT_RUNTIME, "cannot create %s: %s", tmp, strerror(errno));
	print_prom(f, sn);
	if (fflush(f) || ferror(f) || fsync(fileno(f)) || fclose(f)) {
		unlink(tmp);
		die(EXIT_RUNTIME, "cannot write %s: %s", tmp, strerror(errno));
	}
	if (rename(tmp, o.output)) {
		unlink(tmp);
		die(EXIT_RUNTIME, "cannot replace %s: %s", o.output, strerror(errno));
	}
	free(tmp);
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: tierstat [OPTION]... [CGROUP]...\n"
"Show memory tiers, NUMA nodes, per-cgroup top-tier usage, limits and\n"
"demotion/promotion counters, and the system-wide counters of /proc/vmstat.\n"
"CGROUP paths are relative to the cgroup root (\"a/b\"); each is shown with\n"
"its subtree.  Without CGROUP the whole hierarchy is shown.\n"
"\n"
"  -d, --delay TIME        repeat every TIME (seconds, fractions allowed, or\n"
"                          with a unit: 500ms, 2s) and show rates from the\n"
"                          deltas; on a terminal the view redraws in place,\n"
"                          q quits\n"
"  -b, --batch             with -d: append snapshots, never redraw\n"
"      --depth N           cgroups at most N levels below the root\n"
"  -n, --iterations COUNT  stop after COUNT snapshots (implies -d 1 alone)\n"
"  -s, --sort FIELD        order cgroups by name (default), toptier, lower,\n"
"                          usage, demote or promote (numbers: largest first)\n"
"  -r, --raw, --bytes      exact byte counts instead of K/M/G units\n"
"  -j, --json              one JSON object per snapshot (see tierstat(1))\n"
"  -p, --prometheus        Prometheus text exposition format (metric names\n"
"                          in tierstat(1)), for node_exporter's textfile\n"
"                          collector\n"
"  -o, --output FILE       with -p: write each snapshot to FILE, replacing it\n"
"                          atomically (FILE.<pid>.tmp, then rename)\n"
"  -H, --headers           (headers are always printed; kept for scripts)\n"
"      --sysfs DIR         sysfs root (default /sys, env TIERSTAT_SYSFS)\n"
"      --procfs DIR        procfs root (default /proc, env TIERSTAT_PROCFS)\n"
"      --cgroupfs DIR      cgroup root (env TIERSTAT_CGROUPFS; default\n"
"                          SYSFS/fs/cgroup if cgroup2, else\n"
"                          SYSFS/fs/cgroup/memory (v1), else\n"
"                          SYSFS/fs/cgroup/unified)\n"
"  -h, --help              show this help\n"
"  -V, --version           show the version\n"
"\n"
"\"-\" marks a value the kernel does not provide.  Exit status: 0 on\n"
"success, 1 when sysfs, procfs, cgroupfs or a cgroup is missing, 2 on bad\n"
"arguments.\n");
}

static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("tierstat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'tierstat --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

static void parse_args(int argc, char **argv)
{
	enum { OPT_SYSFS = 256, OPT_PROCFS, OPT_CGROUPFS, OPT_DEPTH };
	static const struct option lo[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, 's' },
		{ "bytes", no_argument, NULL, 'r' },
		{ "raw", no_argument, NULL, 'r' },
		{ "batch", no_argument, NULL, 'b' },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "version", no_argument, NULL, 'V' },
		{ "headers", no_argument, NULL, 'H' },
		{ "sysfs", required_argument, NULL, OPT_SYSFS },
		{ "procfs", required_argument, NULL, OPT_PROCFS },
		{ "cgroupfs", required_argument, NULL, OPT_CGROUPFS },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *env;
	char *end;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:n:s:brjpo:HhV", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			errno = 0;
			o.delay = strtod(optarg, &end);
			if (!strcmp(end, "ms"))
				o.delay /= 1000;
			else if (!strcmp(end, "s"))
				end++;
			else if (*end)
				o.delay = -1;
			if (errno || end == optarg || !(o.delay >= 0.01) || o.delay > 86400)
				bad_usage("bad delay '%s': seconds, or a number with ms or s, from 10ms to 86400s",
					  optarg);
			break;
		case 'n':
			errno = 0;
			o.count = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o.count < 1)
				bad_usage("bad count '%s': a positive integer", optarg);
			break;
		case 's':
			o.sort = -1;
			for (size_t i = 0; i < sizeof(sort_names) / sizeof(*sort_names); i++)
				if (!strcmp(optarg, sort_names[i]))
					o.sort = i;
			if (o.sort < 0)
				bad_usage("unknown sort field '%s' (name, toptier, lower, usage, demote, promote)",
					  optarg);
			break;
		case 'r':
			o.bytes = true;
			break;
		case 'b':
			o.batch = true;
			break;
		case OPT_DEPTH:
			errno = 0;
			o.depth = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o.depth < 0 || o.depth > 10000)
				bad_usage("bad depth '%s': a number from 0", optarg);
			break;
		case 'j':
			o.json = true;
			break;
		case 'p':
			o.prom = true;
			break;
		case 'o':
			if (!*optarg)
				bad_usage("empty output file name");
			o.output = optarg;
			break;
		case 'V':
			printf("tierstat %s\n", TIERSTAT_VERSION);
			exit(0);
		case 'H':
			break;	/* headers are always printed */
		case OPT_SYSFS:
			o.sysfs = optarg;
			break;
		case OPT_PROCFS:
			o.procfs = optarg;
			break;
		case OPT_CGROUPFS:
			o.cgroupfs = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			bad_usage("option '%s' needs an argument", argv[optind - 1]);
			break;
		default:
			/* A long option given an argument it does not take also
			 * ends here, with optopt set to its short name. */
			if (!strncmp(argv[optind - 1], "--", 2)) {
				const char *eq = strchr(argv[optind - 1], '=');

				if (optopt && eq)
					bad_usage("option '%.*s' takes no argument",
						  (int)(eq - argv[optind - 1]), argv[optind - 1]);
				bad_usage("unknown option '%s'", argv[optind - 1]);
			}
			if (optopt)
				bad_usage("unknown option '-%c'", optopt);
			bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	o.cgroups = argv + optind;
	o.ncgroups = argc - optind;
	if (o.json && o.prom)
		bad_usage("--json and --prometheus exclude each other");
	if (o.output && !o.prom)
		bad_usage("--output needs --prometheus");
	if (o.count > 0 && o.delay == 0)
		o.delay = 1;
	if (!o.sysfs)
		o.sysfs = (env = getenv("TIERSTAT_SYSFS")) && *env ? env : "/sys";
	if (!o.procfs)
		o.procfs = (env = getenv("TIERSTAT_PROCFS")) && *env ? env : "/proc";
	o.headers = true;
	/* No escape codes where they would print as text. */
	o.colour = isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
		   !((env = getenv("TERM")) && !strcmp(env, "dumb"));
}

/* ---- the live view ---- */

static struct termios saved_tio;
static bool tio_saved, live_screen;

static void live_restore(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	if (live_screen)	/* cursor back, main screen back */
		fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tio_saved = live_screen = false;
}

static void live_signal(int sig)
{
	live_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The alternate screen, no cursor, and keys one at a time without echo. */
static void live_start(void)
{
	struct termios t;

	if (isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &saved_tio)) {
		t = saved_tio;
		t.c_lflag &= ~(ICANON | ECHO);
		t.c_cc[VMIN] = 1;
		t.c_cc[VTIME] = 0;
		tio_saved = !tcsetattr(STDIN_FILENO, TCSAFLUSH, &t);
	}
	live_screen = true;
	fputs("\033[?1049h\033[?25l", stdout);
	atexit(live_restore);
	signal(SIGINT, live_signal);
	signal(SIGTERM, live_signal);
	signal(SIGHUP, live_signal);
}

/* Visible width of a line: escape sequences take no room. */
static int visible(const char *p, const char *end, int cols, const char **cut)
{
	int n = 0;

	while (p < end) {
		if (*p == '\033') {
			while (p < end && !isalpha((unsigned char)*p))
				p++;
			p++;
			continue;
		}
		if (n == cols)
			break;
		n++;
		p++;
	}
	*cut = p;
	return n;
}

/* One frame: from the top left, every line cut to the terminal's width,
 * as many as fit, the rest of each line and of the screen cleared. */
static void live_draw(const char *buf, size_t len)
{
	struct winsize ws = { 0 };
	int rows = 24, cols = 80, row = 0;
	const char *p = buf, *end = buf + len;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		rows = ws.ws_row;
		cols = ws.ws_col;
	}
	fputs("\033[H", stdout);
	while (p < end && row < rows - 1) {
		const char *eol = memchr(p, '\n', end - p), *cut;

		if (!eol)
			eol = end;
		visible(p, eol, cols, &cut);
		fwrite(p, 1, cut - p, stdout);
		if (o.colour)
			fputs("\033[0m", stdout);
		fputs("\033[K\n", stdout);
		p = eol + 1;
		row++;
	}
	fputs("\033[J", stdout);
	fflush(stdout);
}

/* Sleep for the delay, or less: true when q was pressed. */
static bool live_wait(double secs)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	struct timespec t0, t1;
	char ch;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		double left;
		int r;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = secs - ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
		if (left <= 0)
			return false;
		r = poll(&pfd, tio_saved ? 1 : 0, (int)(left * 1000) + 1);
		if (r > 0 && read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
			return true;
		if (r > 0 && (pfd.revents & (POLLHUP | POLLERR)))
			pfd.fd = -1;	/* stdin gone: just wait */
	}
}

int main(int argc, char **argv)
{
	struct snap cur, prev;
	bool have_prev = false, live;
	long n = 0;

	parse_args(argc, argv);
	page_size = sysconf(_SC_PAGESIZE);
	find_cgroup_root();
	/* Redraw in place on a terminal that can (top, systemd-cgtop);
	 * append snapshots otherwise, or with -b. */
	live = o.delay > 0 && !o.json && !o.prom && !o.batch && isatty(STDOUT_FILENO) &&
	       !(getenv("TERM") && !strcmp(getenv("TERM"), "dumb"));
	if (live) {
		struct winsize ws = { 0 };

		if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
			path_width = ws.ws_col / 3 > 12 ? ws.ws_col / 3 : 12;
		live_start();
	}
	for (;;) {
		take(&cur, have_prev ? &prev : NULL);
		if (o.output) {
			write_atomically(&cur);
		} else if (o.prom) {
			print_prom(stdout, &cur);
		} else if (o.json) {
			print_json(&cur, have_prev ? secs(&prev.mono, &cur.mono) : NAN);
		} else if (live) {
			char *buf = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&buf, &len);

			if (!f)
				die(EXIT_RUNTIME, "out of memory");
			print_human(f, &cur, true);
			fclose(f);
			live_draw(buf, len);
			free(buf);
		} else {
			print_human(stdout, &cur, o.delay > 0);
		}
		fflush(stdout);
		if (have_prev)
			release(&prev);
		prev = cur;
		have_prev = true;
		if (o.delay <= 0 || (o.count > 0 && ++n >= o.count))
			break;
		if (live) {
			if (live_wait(o.delay))
				break;
			continue;
		}
		if (!o.json && !o.output)
			putchar('\n');
		struct timespec ts = { (time_t)o.delay,
				       (long)((o.delay - (time_t)o.delay) * 1e9) };
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	release(&prev);
	live_restore();
	return ferror(stdout) ? EXIT_RUNTIME : 0;
}

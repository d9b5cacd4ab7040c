// SPDX-License-Identifier: GPL-2.0
/* tierstat: reading the sources: sysfs tiers and nodes, /proc/vmstat, the cgroup files. */
#define _GNU_SOURCE
#include "tierstat.h"

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

void read_topology(struct snap *sn)
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

void read_vmstat(struct snap *sn)
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

void find_cgroup_root(void)
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

void read_cgroups(struct snap *sn)
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

// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tt.h"

long page_size = 4096;

/* ---- TAP ---------------------------------------------------------------- */
static char skip_reason[256];

void tt_diag(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("# %s\n", line);
	fflush(stdout);
}

void tt_skip_reason(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
}

int tt_run(const struct tt_case *cases, size_t n)
{
	int failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	printf("TAP version 13\n1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		double t0 = now_s();
		enum tt_result r;

		skip_reason[0] = 0;
		tt_diag("running %s", cases[i].name);
		r = cases[i].fn();
		switch (r) {
		case TT_PASS:
			printf("ok %zu %s # %.1fs\n", i + 1, cases[i].name, now_s() - t0);
			break;
		case TT_SKIP:
			printf("ok %zu %s # SKIP %s\n", i + 1, cases[i].name,
			       skip_reason[0] ? skip_reason : "no reason given");
			break;
		default:
			if (cases[i].todo) {
				printf("not ok %zu %s # TODO %s\n", i + 1, cases[i].name,
				       cases[i].todo);
				break;
			}
			printf("not ok %zu %s\n", i + 1, cases[i].name);
			failed++;
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

/* ---- files -------------------------------------------------------------- */
int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t off = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (off + 1 < len && (r = read(fd, buf + off, len - 1 - off)) > 0)
		off += r;
	buf[off] = 0;
	close(fd);
	return (int)off;
}

int write_text(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t r;
	int err = 0;

	if (fd < 0)
		return -errno;
	r = write(fd, val, strlen(val));
	if (r < 0)
		err = -errno;
	else if ((size_t)r != strlen(val))
		err = -EIO;
	close(fd);
	return err;
}

int write_once(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, val, strlen(val));
	if (r < 0)
		r = -errno;
	close(fd);
	return (int)r;
}

long long fd_read_ll(int fd)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return LLONG_MIN;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

long long read_ll(const char *path)
{
	char buf[64];

	if (read_text(path, buf, sizeof(buf)) <= 0)
		return LLONG_MIN;
	return strtoll(buf, NULL, 0);
}

int write_ll(const char *path, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	return write_text(path, buf);
}

bool path_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

bool tt_debug_kernel(void)
{
	return path_exists("/sys/kernel/debug/kmemleak");
}

long long file_key(const char *path, const char *key)
{
	static char buf[1 << 16];
	size_t klen = strlen(key);
	char *line, *save;

	if (read_text(path, buf, sizeof(buf)) < 0)
		return LLONG_MIN;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line;

		while (*p == ' ')
			p++;
		if (strncmp(p, key, klen) || (p[klen] != ' ' && p[klen] != ':'))
			continue;
		p += klen + 1;
		while (*p == ' ' || *p == ':')
			p++;
		return strtoll(p, NULL, 10);
	}
	return LLONG_MIN;
}

/* ---- vmstat --------------------------------------------------------------- */
long long vmstat(const char *key)
{
	return file_key("/proc/vmstat", key);
}

long long vmstat_prefix(const char *prefix)
{
	static char buf[1 << 16];
	long long sum = 0;
	char *line, *save;

	if (read_text("/proc/vmstat", buf, sizeof(buf)) < 0)
		return LLONG_MIN;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, prefix, strlen(prefix)))
			sum += strtoll(strchr(line, ' ') + 1, NULL, 10);
	return sum;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- memory --------------------------------------------------------------- */
void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint64_t pattern(uint64_t seed, size_t page)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + page;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 29);
}

void fill_pages(void *buf, size_t len, uint64_t seed)
{
	for (size_t off = 0, i = 0; off < len; off += page_size, i++) {
		uint64_t *w = (uint64_t *)((char *)buf + off);

		w[0] = pattern(seed, i);
		w[page_size / 8 - 1] = ~pattern(seed, i);
	}
}

/* Page i of a buffer written by fill_pages(seed) still holds its pattern. */
static bool page_ok(const void *buf, size_t i, uint64_t seed)
{
	const uint64_t *w = (const uint64_t *)((const char *)buf + i * page_size);

	return w[0] == pattern(seed, i) && w[page_size / 8 - 1] == ~pattern(seed, i);
}

size_t check_pages(const void *buf, size_t len, uint64_t seed)
{
	size_t bad = 0;

	for (size_t i = 0; i * page_size < len; i++)
		if (!page_ok(buf, i, seed))
			bad++;
	return bad;
}

uint64_t touch_pages(const void *buf, size_t len)
{
	uint64_t sum = 0;

	for (size_t off = 0; off < len; off += page_size)
		sum += *(volatile const uint64_t *)((const char *)buf + off);
	return sum;
}

/* ---- NUMA ----------------------------------------------------------------- */
#define MPOL_DEFAULT	0
#define MPOL_PREFERRED	1
#define MPOL_BIND	2
#define MPOL_MF_MOVE	(1 << 1)

int tt_set_mempolicy(int mode, const unsigned long *mask, unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, mask, maxnode);
}

int tt_mbind(void *addr, size_t len, int mode, const unsigned long *mask,
	     unsigned long maxnode, unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

int bind_to_node(int node)
{
	unsigned long mask = 1UL << node;

	return tt_set_mempolicy(MPOL_BIND, &mask, sizeof(mask) * 8);
}

int prefer_node(int node)
{
	unsigned long mask = 1UL << node;

	return tt_set_mempolicy(MPOL_PREFERRED, &mask, sizeof(mask) * 8);
}

int unbind(void)
{
	return tt_set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

int place_on_node(void *buf, size_t len, int node)
{
	unsigned long mask = 1UL << node;

	if (tt_mbind(buf, len, MPOL_BIND, &mask, sizeof(mask) * 8, MPOL_MF_MOVE))
		return -errno;
	return 0;
}

int reset_policy(void *buf, size_t len)
{
	return tt_mbind(buf, len, MPOL_DEFAULT, NULL, 0, 0) ? -errno : 0;
}

#define MOVE_BATCH 4096

static int move_pages_batch(void **pages, int *nodes, int *status, unsigned long n)
{
	return syscall(SYS_move_pages, 0, n, pages, nodes, status, 0);
}

int pages_per_node(const void *buf, size_t len, long counts[TT_MAX_NODES])
{
	static void *pages[MOVE_BATCH];
	static int status[MOVE_BATCH];
	size_t npages = len / page_size;

	memset(counts, 0, sizeof(long) * TT_MAX_NODES);
	for (size_t i = 0; i < npages; i += MOVE_BATCH) {
		size_t n = npages - i < MOVE_BATCH ? npages - i : MOVE_BATCH;

		for (size_t j = 0; j < n; j++)
			pages[j] = (char *)buf + (i + j) * page_size;
		if (move_pages_batch(pages, NULL, status, n))
			return -errno;
		for (size_t j = 0; j < n; j++)
			if (status[j] >= 0 && status[j] < TT_MAX_NODES)
				counts[status[j]]++;
	}
	return 0;
}

int move_range(void *buf, size_t len, int node)
{
	static void *pages[MOVE_BATCH];
	static int nodes[MOVE_BATCH], status[MOVE_BATCH];
	size_t npages = len / page_size;

	for (size_t i = 0; i < npages; i += MOVE_BATCH) {
		size_t n = npages - i < MOVE_BATCH ? npages - i : MOVE_BATCH;

		for (size_t j = 0; j < n; j++) {
			pages[j] = (char *)buf + (i + j) * page_size;
			nodes[j] = node;
		}
		if (move_pages_batch(pages, nodes, status, n) < 0)
			return -errno;
	}
	return 0;
}

static long long node_meminfo(int node, const char *key)
{
	char path[128], k[64];

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	snprintf(k, sizeof(k), "Node %d %s", node, key);
	return file_key(path, k) * 1024;
}

long long node_free(int node)
{
	return node_meminfo(node, "MemFree");
}

long long node_total(int node)
{
	return node_meminfo(node, "MemTotal");
}

long long node_file(int node)
{
	return node_meminfo(node, "Active(file)") + node_meminfo(node, "Inactive(file)");
}

int nodelist_parse(const char *list, bool nodes[TT_MAX_NODES])
{
	const char *p = list;
	int count = 0;

	memset(nodes, 0, sizeof(bool) * TT_MAX_NODES);
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			return -1;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long i = a; i <= b && i < TT_MAX_NODES; i++)
			if (!nodes[i]) {
				nodes[i] = true;
				count++;
			}
		p = *end == ',' ? end + 1 : end;
	}
	return count;
}

/* Lines look like "Node 0, zone    DMA32", "  pages free     1234", "        min      56". */
int zoneinfo_read(struct tt_zone *zones, int max)
{
	static const struct {
		const char *key;
		size_t off;
	} fields[] = {
		{ "boost", offsetof(struct tt_zone, boost) },
		{ "min", offsetof(struct tt_zone, min) },
		{ "low", offsetof(struct tt_zone, low) },
		{ "high", offsetof(struct tt_zone, high) },
		{ "promo", offsetof(struct tt_zone, promo) },
		{ "toptier", offsetof(struct tt_zone, toptier) },
		{ "managed", offsetof(struct tt_zone, managed) },
	};
	static char buf[1 << 18];
	struct tt_zone *z = NULL;
	char *line, *save;
	int n = 0;

	if (read_text("/proc/zoneinfo", buf, sizeof(buf)) < 0)
		return -errno;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[32], zname[16];
		long long v;
		int node;

		if (sscanf(line, "Node %d, zone %15s", &node, zname) == 2) {
			if (n == max)
				return -ENOSPC;
			z = &zones[n++];
			memset(z, 0xff, sizeof(*z));	/* every field -1 */
			z->node = node;
			memcpy(z->name, zname, sizeof(z->name));
			continue;
		}
		if (!z)
			continue;
		if (sscanf(line, " pages free %lld", &v) == 1) {
			z->free = v;
			continue;
		}
		/* Exact keys only: the pagesets have "high:" lines too. */
		if (sscanf(line, " %31s %lld", key, &v) != 2)
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
			if (!strcmp(key, fields[i].key))
				*(long long *)((char *)z + fields[i].off) = v;
	}
	return n;
}

/* ---- cgroups -------------------------------------------------------------- */
static int mount_once(const char *dir, const char *type, const char *opts)
{
	char probe[256];

	mkdir("/sys/fs/cgroup", 0755);
	if (!path_exists("/sys/fs/cgroup/.tt")) {
		if (mount("tmpfs", "/sys/fs/cgroup", "tmpfs", 0, "mode=755"))
			return -errno;
		mkdir("/sys/fs/cgroup/.tt", 0755);
	}
	snprintf(probe, sizeof(probe), "%s/cgroup.procs", dir);
	if (path_exists(probe))
		return 0;
	mkdir(dir, 0755);
	return mount("none", dir, type, 0, opts) ? -errno : 0;
}

const char *cg1_root(void)
{
	static const char *root = "/sys/fs/cgroup/memory";

	if (mount_once(root, "cgroup", "memory")) {
		tt_diag("mount cgroup v1 memory: %s", strerror(errno));
		return NULL;
	}
	return root;
}

const char *cg2_root(void)
{
	static const char *root = "/sys/fs/cgroup/unified";

	if (mount_once(root, "cgroup2", NULL)) {
		tt_diag("mount cgroup2: %s", strerror(errno));
		return NULL;
	}
	if (cg_write(root, "cgroup.subtree_control", "+memory")) {
		tt_diag("enable memory in cgroup2: %s", strerror(errno));
		return NULL;
	}
	return root;
}

char *cg_create(const char *parent, const char *name)
{
	char *path;

	if (!parent || asprintf(&path, "%s/%s", parent, name) < 0)
		return NULL;
	if (mkdir(path, 0755) && errno != EEXIST) {
		tt_diag("mkdir %s: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	return path;
}

int cg_destroy(const char *path)
{
	char procs[512], buf[4096];
	double deadline = now_s() + 30;

	if (!path)
		return 0;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	while (now_s() < deadline) {
		if (read_text(procs, buf, sizeof(buf)) < 0)
			return 0;	/* gone already */
		for (char *p = buf; *p;) {
			char *end;
			long pid = strtol(p, &end, 10);

			if (end == p)
				break;
			kill(pid, SIGKILL);
			p = end + (*end == '\n');
		}
		if (!rmdir(path) || errno == ENOENT)
			return 0;
		usleep(10000);	/* poll interval while tasks exit */
	}
	tt_diag("could not remove %s: %s", path, strerror(errno));
	return -1;
}

long long cg_wait_at_most(const char *cg, const char *file, long long want, double secs,
			  void (*show)(const char *step))
{
	double deadline = now_s() + secs, next_show = now_s() + 10;
	long long v;

	while ((v = cg_read_ll(cg, file)) > want && now_s() < deadline) {
		if (show && now_s() >= next_show) {
			show("waiting");
			next_show = now_s() + 10;
		}
		usleep(200 * 1000);	/* poll interval */
	}
	return v;
}

long long cg_wait_settled(const char *cg, const char *file)
{
	long long v, prev = LLONG_MIN;

	while ((v = cg_read_ll(cg, file)) != prev) {
		prev = v;
		sleep(1);	/* the "nothing changes" window */
	}
	return v;
}

void cg_destroy_free(char **cg)
{
	if (!*cg)
		return;
	cg_destroy(*cg);
	free(*cg);
	*cg = NULL;
}

int cg_write(const char *cg, const char *file, const char *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return write_text(path, val);
}

long long cg_read_ll(const char *cg, const char *file)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return read_ll(path);
}

long long cg_read_key(const char *cg, const char *file, const char *key)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return file_key(path, key);
}

int cg_attach(const char *cg, pid_t pid)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", pid);
	return cg_write(cg, "cgroup.procs", buf);
}

/* memory.numa_stat: "name=total N0=.." in v1, "name N0=.." in v2. */
static long long numa_stat_entry(const char *cg, const char *name, char sep, int node)
{
	static char buf[1 << 14];
	char path[512], key[64], nkey[16];
	char *line, *save;

	snprintf(path, sizeof(path), "%s/memory.numa_stat", cg);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return LLONG_MIN;
	snprintf(key, sizeof(key), "%s%c", name, sep);
	snprintf(nkey, sizeof(nkey), " N%d=", node);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p;

		if (strncmp(line, key, strlen(key)))
			continue;
		p = strstr(line, nkey);
		return p ? strtoll(p + strlen(nkey), NULL, 10) : LLONG_MIN;
	}
	return LLONG_MIN;
}

long long cg1_numa_stat(const char *cg, const char *name, int node)
{
	return numa_stat_entry(cg, name, '=', node);
}

long long cg2_numa_stat(const char *cg, const char *name, int node)
{
	return numa_stat_entry(cg, name, ' ', node);
}

/* ---- memory tiers --------------------------------------------------------- */
#define TIERS_DIR "/sys/devices/virtual/memory_tiering"

int tiers_read(struct tt_tier *tiers, int max)
{
	bool has_memory[TT_MAX_NODES];
	char buf[256], path[512];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	if (read_text("/sys/devices/system/node/has_memory", buf, sizeof(buf)) <= 0 ||
	    nodelist_parse(buf, has_memory) <= 0)
		return -ENOENT;
	dir = opendir(TIERS_DIR);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		struct tt_tier t = { 0 };
		char *end;
		long key;
		int i;

		if (strncmp(d->d_name, "memory_tier", 11))
			continue;
		key = strtol(d->d_name + 11, &end, 10);
		if (end == d->d_name + 11 || *end || key < 0 || key > INT_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%s/nodelist", TIERS_DIR, d->d_name);
		if (read_text(path, buf, sizeof(buf)) < 0 || nodelist_parse(buf, t.nodes) < 0)
			continue;
		t.key = (int)key;
		for (int node = 0; node < TT_MAX_NODES; node++) {
			t.nodes[node] = t.nodes[node] && has_memory[node];
			t.nnodes += t.nodes[node];
		}
		if (!t.nnodes)
			continue;
		if (n == max) {
			closedir(dir);
			return -ENOSPC;
		}
		/* Insert in ascending key order. */
		for (i = n++; i > 0 && tiers[i - 1].key > t.key; i--)
			tiers[i] = tiers[i - 1];
		tiers[i] = t;
	}
	closedir(dir);
	return n;
}

int tier_of_node(int node)
{
	struct tt_tier tiers[TT_MAX_TIERS];
	int n = tiers_read(tiers, TT_MAX_TIERS);

	for (int i = 0; i < n; i++)
		if (node >= 0 && node < TT_MAX_NODES && tiers[i].nodes[node])
			return tiers[i].key;
	return -1;
}

void node_free_wmark(int node, enum tt_wmark which, long long *free, long long *wmark)
{
	struct tt_zone zones[TT_MAX_ZONES];
	int n = zoneinfo_read(zones, TT_MAX_ZONES);

	*free = *wmark = 0;
	for (int i = 0; i < n; i++) {
		const struct tt_zone *z = &zones[i];

		if (z->node != node || z->managed <= 0)
			continue;
		*free += z->free * page_size;
		*wmark += (which == TT_WMARK_MIN ? z->min : which == TT_WMARK_LOW ? z->low :
			   which == TT_WMARK_HIGH ? z->high : z->toptier) * page_size;
	}
}

bool tiers_wait(int want, double secs)
{
	struct tt_tier tiers[TT_MAX_TIERS];
	double deadline = now_s() + secs;

	while (tiers_read(tiers, TT_MAX_TIERS) != want && now_s() < deadline)
		usleep(20 * 1000);
	return tiers_read(tiers, TT_MAX_TIERS) == want;
}

#define MEMORY_DIR	"/sys/devices/system/memory"

int node_blocks_set(int node, const char *state, int *nblocks)
{
	return node_blocks_set_some(node, state, INT_MAX, nblocks);
}

int node_blocks_set_some(int node, const char *state, int max, int *nblocks)
{
	DIR *dir = opendir(MEMORY_DIR);
	struct dirent *d;
	int err = 0, changed = 0;

	*nblocks = 0;
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char path[512], cur[32];

		if (strncmp(d->d_name, "memory", 6) || !strchr("0123456789", d->d_name[6]))
			continue;
		snprintf(path, sizeof(path), "%s/%s/node%d", MEMORY_DIR, d->d_name, node);
		if (!path_exists(path))
			continue;
		(*nblocks)++;
		snprintf(path, sizeof(path), "%s/%s/state", MEMORY_DIR, d->d_name);
		if (read_text(path, cur, sizeof(cur)) <= 0) {
			err = -EIO;
			break;
		}
		/* "online\n" or "offline\n": leave a block already there. */
		if (!strncmp(cur, "offline", 7) == !strcmp(state, "offline") || changed >= max)
			continue;
		changed++;
		/* Offlining may meet a page in flight: try again a few times. */
		for (int i = 0; i < 20; i++) {
			err = write_text(path, state);
			if (err != -EBUSY && err != -EAGAIN)
				break;
			usleep(50 * 1000);
		}
		if (err)
			break;
	}
	closedir(dir);
	return err;
}

#define ND_DIR		"/sys/bus/nd"
#define DAX_DIR		"/sys/bus/dax"

/* The first device on the dax bus (dax0.0), or NULL. */
static const char *dax_device(void)
{
	static char name[64];
	DIR *dir = opendir(DAX_DIR "/devices");
	struct dirent *d;

	name[0] = 0;
	while (dir && (d = readdir(dir)))
		if (!strncmp(d->d_name, "dax", 3) && strlen(d->d_name) < sizeof(name)) {
			strcpy(name, d->d_name);
			break;
		}
	if (dir)
		closedir(dir);
	return name[0] ? name : NULL;
}

/*
 * Turn the raw namespace into a device-dax: detach it from nd_pmem, give
 * the region's dax seed a uuid, a memmap kept on the device ("pmem") and
 * the namespace, and bind the seed to dax_pmem.  What ndctl's
 * "create-namespace -f -m devdax" does, through sysfs.
 */
static int pmem_make_devdax(void)
{
	char seed[64], path[256];
	int err;

	if (read_text(ND_DIR "/devices/region0/dax_seed", seed, sizeof(seed)) <= 0)
		return -ENODEV;
	seed[strcspn(seed, "\n")] = 0;
	if (path_exists(ND_DIR "/devices/namespace0.0/driver")) {
		err = write_text(ND_DIR "/drivers/nd_pmem/unbind", "namespace0.0");
		if (err)
			return err;
	}
	snprintf(path, sizeof(path), ND_DIR "/devices/%s/uuid", seed);
	err = write_text(path, "2f1e3a4b-5c6d-4e7f-8a9b-0c1d2e3f4a5b");
	snprintf(path, sizeof(path), ND_DIR "/devices/%s/mode", seed);
	err = err ?: write_text(path, "pmem");
	snprintf(path, sizeof(path), ND_DIR "/devices/%s/namespace", seed);
	err = err ?: write_text(path, "namespace0.0");
	return err ?: write_text(ND_DIR "/drivers/dax_pmem/bind", seed);
}

int pmem_to_kmem(void)
{
	const char *dev = dax_device();
	char path[256];
	int err;

	if (!dev) {
		err = pmem_make_devdax();
		if (err)
			return err;
		dev = dax_device();
		if (!dev)
			return -ENODEV;
	}
	snprintf(path, sizeof(path), DAX_DIR "/drivers/device_dax/%s", dev);
	if (path_exists(path)) {
		err = write_text(DAX_DIR "/drivers/device_dax/unbind", dev);
		if (err)
			return err;
	}
	snprintf(path, sizeof(path), DAX_DIR "/drivers/kmem/%s", dev);
	if (!path_exists(path)) {
		/* new_id the first time, bind once kmem knows the device. */
		err = write_text(DAX_DIR "/drivers/kmem/bind", dev);
		if (err)
			err = write_text(DAX_DIR "/drivers/kmem/new_id", dev);
		if (err)
			return err;
	}
	snprintf(path, sizeof(path), DAX_DIR "/devices/%s/target_node", dev);
	return (int)read_ll(path);
}

int pmem_from_kmem(void)
{
	const char *dev = dax_device();
	char path[256];

	if (!dev)
		return -ENODEV;
	snprintf(path, sizeof(path), DAX_DIR "/drivers/kmem/%s", dev);
	if (!path_exists(path))
		return 0;
	return write_text(DAX_DIR "/drivers/kmem/unbind", dev);
}

static int node_blocks(int node)
{
	int n;

	node_blocks_set_some(node, "offline", 0, &n);
	return n;
}

int host_add_dimm(int node, int mb)
{
	char buf[4096];
	int before = node_blocks(node), want;
	double deadline = now_s() + 30;
	long long block;

	if (read_text("/proc/cmdline", buf, sizeof(buf)) <= 0 ||
	    !strstr(buf, "toptier.host_requests=1"))
		return -EOPNOTSUPP;
	/* Hexadecimal, without a prefix. */
	if (read_text("/sys/devices/system/memory/block_size_bytes", buf, sizeof(buf)) <= 0)
		return -EIO;
	block = strtoll(buf, NULL, 16);
	if (block <= 0)
		return -EIO;
	want = before + (int)(((long long)mb << 20) / block);
	/* The TAP port is the host's: a diagnostic line it acts on. */
	printf("# toptier-host: add-dimm %d %d\n", node, mb);
	fflush(stdout);
	while (node_blocks(node) < want && now_s() < deadline)
		usleep(50 * 1000);
	return node_blocks(node) >= want ? 0 : -ETIMEDOUT;
}

/* ---- what a test case leaves behind ------------------------------------ */
#define TT_MAX_OWNED	16
static char *owned_cgroups[TT_MAX_OWNED];
static int nowned_cgroups;
static struct holder *owned_holders[TT_MAX_OWNED];

char *tt_cgroup(const char *parent, const char *name)
{
	char *cg;

	if (nowned_cgroups == TT_MAX_OWNED) {
		tt_diag("tt_cgroup: more than %d cgroups in one case", TT_MAX_OWNED);
		return NULL;
	}
	cg = cg_create(parent, name);
	if (cg)
		owned_cgroups[nowned_cgroups++] = cg;
	return cg;
}

struct holder *tt_holder(const char *cg, size_t len, uint64_t seed, bool thp)
{
	for (int i = 0; i < TT_MAX_OWNED; i++)
		if (!owned_holders[i])
			return owned_holders[i] = holder_start(cg, len, seed, thp);
	tt_diag("tt_holder: more than %d holders in one case", TT_MAX_OWNED);
	return NULL;
}

void tt_holder_release(struct holder *h)
{
	for (int i = 0; h && i < TT_MAX_OWNED; i++)
		if (owned_holders[i] == h)
			owned_holders[i] = NULL;
	holder_stop(h);
}

void tt_release_all(void)
{
	for (int i = 0; i < TT_MAX_OWNED; i++)
		tt_holder_release(owned_holders[i]);
	/* Newest first: children were created after their parents. */
	while (nowned_cgroups > 0) {
		char *cg = owned_cgroups[--nowned_cgroups];

		cg_destroy(cg);
		free(cg);
	}
}

int churn_anon(void *arg __attribute__((unused)))
{
	for (uint64_t seed = 1;; seed++) {
		char *buf = map_anon(CHURN_LEN);

		if (!buf)
			return 10;
		fill_pages(buf, CHURN_LEN, seed);
		if (check_pages(buf, CHURN_LEN, seed))
			return 11;
		munmap(buf, CHURN_LEN);
	}
	return 0;
}

int node_online_blocks(int node)
{
	char dirpath[64];
	struct dirent *d;
	int online = 0;
	DIR *dir;

	snprintf(dirpath, sizeof(dirpath), "/sys/devices/system/node/node%d", node);
	dir = opendir(dirpath);
	while (dir && (d = readdir(dir))) {
		char path[400], buf[32];

		if (strncmp(d->d_name, "memory", 6) || !strchr("0123456789", d->d_name[6]))
			continue;
		snprintf(path, sizeof(path), "%s/%s/state", dirpath, d->d_name);
		if (read_text(path, buf, sizeof(buf)) > 0 && !strncmp(buf, "online", 6))
			online++;
	}
	if (dir)
		closedir(dir);
	return online;
}

const char *pmem_join(void)
{
	int n;

	if (pmem_to_kmem() != 1)
		return "the NVDIMM did not become node1's memory (dax/kmem)";
	if (node_blocks_set(1, "online_movable", &n) || n == 0)
		return "node1's memory blocks did not go online";
	if (!tiers_wait(2, 10))
		return "node1 did not become a second tier";
	if (tier_of_node(1) <= tier_of_node(0))
		return "node1 is not in a tier below node0's";
	return NULL;
}

void pmem_leave(void)
{
	int n;

	node_blocks_set(1, "offline", &n);
	pmem_from_kmem();
}

/* One "N value" line, all of it: 0, or -EINVAL. */
static int keyed_line(const char *line, size_t len, int *key, long long *val)
{
	char tmp[128], *end;
	unsigned long long v;
	long k;

	if (len == 0 || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, line, len);
	tmp[len] = 0;
	if (tmp[0] < '0' || tmp[0] > '9')
		return -EINVAL;
	errno = 0;
	k = strtol(tmp, &end, 10);
	if (errno || k > INT_MAX || *end != ' ')
		return -EINVAL;
	*key = (int)k;
	line = end + 1;
	if (!strcmp(line, "max")) {
		*val = TT_TIER_MAX;
		return 0;
	}
	if (*line < '0' || *line > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(line, &end, 10);
	if (errno || *end || v > (unsigned long long)LLONG_MAX)
		return -EINVAL;
	*val = (long long)v;
	return 0;
}

int keyed_parse(const char *buf, int *keys, long long *vals, int max)
{
	int n = 0;

	while (*buf) {
		size_t len = strcspn(buf, "\n");
		int key;
		long long val;

		if (keyed_line(buf, len, &key, &val))
			return -EINVAL;
		if (n == max)
			return -ENOSPC;
		keys[n] = key;
		vals[n++] = val;
		buf += len;
		if (*buf == '\n')
			buf++;
	}
	return n;
}

int keyed_read(const char *path, int *keys, long long *vals, int max)
{
	char buf[1024];
	int r = read_text(path, buf, sizeof(buf));

	return r < 0 ? r : keyed_parse(buf, keys, vals, max);
}

long long fd_tier_read(int fd, int key)
{
	int keys[TT_MAX_TIERS];
	long long vals[TT_MAX_TIERS];
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return LLONG_MIN;
	buf[n] = 0;
	n = keyed_parse(buf, keys, vals, TT_MAX_TIERS);
	for (int i = 0; i < n; i++)
		if (keys[i] == key)
			return vals[i];
	return LLONG_MIN;
}

long long cg_tier_read(const char *cg, const char *file, int key)
{
	int keys[TT_MAX_TIERS];
	long long vals[TT_MAX_TIERS];
	char path[512];
	int n;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	n = keyed_read(path, keys, vals, TT_MAX_TIERS);
	for (int i = 0; i < n; i++)
		if (keys[i] == key)
			return vals[i];
	return LLONG_MIN;
}

bool cg_tier_current_matches(const char *cg, int key, long long want, long long tol,
			     const char *step)
{
	long long line = cg_tier_read(cg, "memory.tiers.current", key);
	long long numa = cg2_numa_upto_tier(cg, key);

	tt_diag("%s: line %d %lld MB, numa_stat %lld MB, expected %lld MB", step, key,
		line / (long long)MB, numa / (long long)MB, want / (long long)MB);
	return line >= numa - tol && line <= numa + tol && line >= want - tol && line <= want + tol;
}

long long cg_tier_line_at_most(const char *cg, int key, long long want, double secs)
{
	double deadline = now_s() + secs;
	long long line;

	while ((line = cg_tier_read(cg, "memory.tiers.current", key)) > want &&
	       now_s() < deadline)
		usleep(50 * 1000);
	return line;
}

bool cg_tier_line_agrees(const char *cg, int key, long long tol, pid_t pause, double secs,
			 const char *step)
{
	double deadline = now_s() + secs;
	long long line, numa;
	bool ok;

	for (;;) {
		/* Held still, so that its own faults do not move the two apart. */
		if (pause > 0)
			kill(pause, SIGSTOP);
		line = cg_tier_read(cg, "memory.tiers.current", key);
		numa = cg2_numa_upto_tier(cg, key);
		if (pause > 0)
			kill(pause, SIGCONT);
		ok = line >= 0 && numa >= 0 && line >= numa - tol && line <= numa + tol;
		if (ok || now_s() >= deadline)
			break;
		usleep(100 * 1000);
	}
	tt_diag("%s: line %d %lld MB, numa_stat %lld MB", step, key, line / (long long)MB,
		numa / (long long)MB);
	return ok;
}

int cg_tier_write(const char *cg, const char *file, int key, const char *val)
{
	char line[128];

	snprintf(line, sizeof(line), "%d %s\n", key, val);
	return cg_write(cg, file, line);
}

long long cg_tier_event(const char *cg, int key, const char *name)
{
	char path[512], buf[1024], field[32], *line, *save;

	snprintf(path, sizeof(path), "%s/memory.tiers.events", cg);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return LLONG_MIN;
	snprintf(field, sizeof(field), " %s=", name);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end, *p;
		long k = strtol(line, &end, 10);

		if (end == line || *end != ' ' || k != key)
			continue;
		p = strstr(end, field);
		return p ? strtoll(p + strlen(field), NULL, 10) : LLONG_MIN;
	}
	return LLONG_MIN;
}

long long cg_numa_stat_sum(const char *cg, const bool nodes[TT_MAX_NODES],
			   const char *const *names, int nnames)
{
	static char buf[1 << 15];
	char path[512], *line, *save;
	long long sum = 0;
	int found = 0;

	snprintf(path, sizeof(path), "%s/memory.numa_stat", cg);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return LLONG_MIN;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t klen = strcspn(line, " =");
		bool want = false;

		for (int i = 0; i < nnames; i++)
			if (strlen(names[i]) == klen && !strncmp(line, names[i], klen))
				want = true;
		if (!want)
			continue;
		found++;
		for (char *p = strstr(line, " N"); p; p = strstr(p + 1, " N")) {
			int node;
			long long v;

			if (sscanf(p, " N%d=%lld", &node, &v) == 2 && node >= 0 &&
			    node < TT_MAX_NODES && nodes[node])
				sum += v;
		}
	}
	return found == nnames ? sum : LLONG_MIN;
}

long long cg2_numa_entries_upto_tier(const char *cg, int key, const char *const *names,
				     int nnames)
{
	struct tt_tier tiers[TT_MAX_TIERS];
	bool counted[TT_MAX_NODES] = { false };
	int ntiers = tiers_read(tiers, TT_MAX_TIERS);

	if (ntiers <= 0)
		return LLONG_MIN;
	for (int i = 0; i < ntiers; i++)
		for (int node = 0; node < TT_MAX_NODES; node++)
			if (tiers[i].key <= key && tiers[i].nodes[node])
				counted[node] = true;
	return cg_numa_stat_sum(cg, counted, names, nnames);
}

long long cg2_numa_upto_tier(const char *cg, int key)
{
	static const char *const anon_file[] = { "anon", "file" };

	return cg2_numa_entries_upto_tier(cg, key, anon_file, ARRAY_SIZE(anon_file));
}

/* ---- processes ------------------------------------------------------------ */
pid_t spawn_in(const char *cg, int (*fn)(void *), void *arg)
{
	int joined[2] = { -1, -1 }, err;
	pid_t pid;
	char c;

	/*
	 * With a cgroup, return only once the child is in it (or has failed
	 * to get there and is exiting): a caller that then moves the child
	 * elsewhere must not have it join cg afterwards, behind its back.
	 */
	if (cg && pipe2(joined, O_CLOEXEC))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid) {
		err = errno;
		if (cg) {
			close(joined[1]);
			/* EOF: the child closed its end, attached or not. */
			while (pid > 0 && read(joined[0], &c, 1) < 0 && errno == EINTR)
				;
			close(joined[0]);
		}
		errno = err;
		return pid;
	}
	if (cg) {
		close(joined[0]);
		if (cg_attach(cg, getpid())) {
			tt_diag("attach to %s failed", cg);
			_exit(126);
		}
		close(joined[1]);
	}
	_exit(fn(arg));
}

void child_stop(pid_t *pid, bool kill_it)
{
	if (*pid > 0) {
		if (kill_it)
			kill(*pid, SIGKILL);
		wait_child(*pid);
	}
	*pid = -1;
}

struct node_filler_args {
	int node, done_fd;
	enum tt_wmark which;
	long long below;
};

static int node_filler_main(void *arg)
{
	const struct node_filler_args *fa = arg;
	const size_t max = 16384 * MB;	/* address space only */
	long long free, wmark;
	size_t off;
	char *p;

	if (bind_to_node(fa->node))
		return 1;
	p = mmap(NULL, max, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	for (off = 0; off < max; off += MB) {
		node_free_wmark(fa->node, fa->which, &free, &wmark);
		if (free <= wmark - fa->below)
			break;
		for (size_t i = 0; i < MB; i += page_size)
			p[off + i] = 1;
	}
	if (off >= max || write(fa->done_fd, "", 1) != 1)
		return 3;
	for (;;)
		pause();
}

pid_t node_filler_start(const char *cg, int node, enum tt_wmark which, long long below,
			int timeout_s)
{
	struct node_filler_args fa = { .node = node, .which = which, .below = below };
	int fds[2], ready = 0;
	struct pollfd pfd;
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	fa.done_fd = fds[1];
	pid = spawn_in(cg, node_filler_main, &fa);
	close(fds[1]);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	/* A child that dies closes its end: POLLHUP, and read() gets 0. */
	if (pid > 0 && poll(&pfd, 1, timeout_s * 1000) == 1)
		ready = read(fds[0], &c, 1) == 1;
	close(fds[0]);
	if (!ready) {
		tt_diag("filler of node%d: %s", node, pid > 0 ? "died or timed out" :
			strerror(errno));
		child_stop(&pid, true);
		return -1;
	}
	return pid;
}

pid_t kswapd_pid(int node)
{
	char path[300], comm[32], want[32];
	struct dirent *d;
	pid_t pid = -1;
	DIR *dir;

	snprintf(want, sizeof(want), "kswapd%d\n", node);
	dir = opendir("/proc");
	while (dir && pid < 0 && (d = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (read_text(path, comm, sizeof(comm)) > 0 && !strcmp(comm, want))
			pid = atoi(d->d_name);
	}
	if (dir)
		closedir(dir);
	return pid;
}

int wait_child(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) < 0)
		return -1;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

#define NOBODY 65534

int as_nobody(int (*fn)(void *), void *arg)
{
	int *res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int r = INT_MIN;
	pid_t pid;

	if (res == MAP_FAILED)
		return INT_MIN;
	*res = INT_MIN;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* The groups first: setgroups() needs CAP_SETGID. */
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) ||
		    geteuid() != NOBODY || getegid() != NOBODY) {
			tt_diag("cannot become uid %d: %s", NOBODY, strerror(errno));
			_exit(1);
		}
		*res = fn(arg);
		_exit(0);
	}
	if (pid > 0 && wait_child(pid) == 0)
		r = *res;
	munmap(res, sizeof(*res));
	return r;
}

const char *topology(void)
{
	static char buf[4096];
	char *p;

	if (read_text("/proc/cmdline", buf, sizeof(buf)) < 0)
		return "2tier";
	p = strstr(buf, "toptier.topology=");
	if (!p)
		return "2tier";
	p += strlen("toptier.topology=");
	p[strcspn(p, " \n")] = 0;
	return p;
}

/* ---- holders -------------------------------------------------------------- */
/* Shared with the child: the request's arguments and its results. */
struct holder_shm {
	uint64_t seed;
	bool thp;
	int node;			/* 'm': target node */
	size_t chunk, keep;		/* 't': and later 'k' checks only what is kept */
	long counts[TT_MAX_NODES];	/* 'c' */
	long bad;			/* 'k' */
	int err;			/* 0 or -errno of the last request */
};

/* A request may wait for reclaim on a slow TCG guest. */
#define HOLDER_TIMEOUT_MS (180 * 1000)

static char *holder_map(struct holder *h)
{
	size_t huge = 2 * MB;
	char *raw, *buf;

	if (!h->shm->thp)
		return map_anon(h->len);
	/* Over-allocate to align the buffer to a PMD. */
	raw = map_anon(h->len + huge);
	if (!raw)
		return NULL;
	buf = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
	if (madvise(buf, h->len, MADV_HUGEPAGE))
		return NULL;
	return buf;
}

static long holder_bad(struct holder *h, const char *buf)
{
	struct holder_shm *s = h->shm;
	size_t npages = h->len / page_size, per = s->chunk / page_size;
	size_t kept = s->keep / page_size;
	long bad = 0;

	for (size_t i = 0; i < npages; i++)
		if ((!per || i % per < kept) && !page_ok(buf, i, s->seed))
			bad++;
	return bad;
}

static int holder_trim_buf(struct holder *h, char *buf)
{
	struct holder_shm *s = h->shm;

	for (size_t off = 0; off < h->len; off += s->chunk) {
		size_t end = off + s->chunk < h->len ? off + s->chunk : h->len;

		if (off + s->keep < end &&
		    madvise(buf + off + s->keep, end - off - s->keep, MADV_DONTNEED))
			return -errno;
	}
	return 0;
}

static int holder_main(void *arg)
{
	struct holder *h = arg;
	struct holder_shm *s = h->shm;
	char *buf, op = 'a';

	/* Drop every other pipe end, or the children never see EOF. */
	for (int fd = 3; fd < 1024; fd++)
		if (fd != h->child_req && fd != h->child_resp)
			close(fd);
	buf = holder_map(h);
	s->err = buf ? 0 : -ENOMEM;
	if (buf)
		fill_pages(buf, h->len, s->seed);
	do {
		switch (op) {
		case 'c':
			s->err = pages_per_node(buf, h->len, s->counts);
			break;
		case 'm':
			s->err = move_range(buf, h->len, s->node);
			break;
		case 'k':
			s->bad = holder_bad(h, buf);
			s->err = 0;
			break;
		case 't':
			s->err = holder_trim_buf(h, buf);
			break;
		}
		if (write(h->child_resp, &op, 1) != 1 || !buf)
			return 1;
	} while (read(h->child_req, &op, 1) == 1);
	return 0;	/* the parent went away */
}

/* Wait for the child's answer to the current request. */
static int holder_wait(struct holder *h)
{
	struct pollfd p = { .fd = h->resp, .events = POLLIN };
	char op;

	if (poll(&p, 1, HOLDER_TIMEOUT_MS) != 1)
		return -ETIMEDOUT;
	if (read(h->resp, &op, 1) != 1)
		return -ECHILD;	/* it died, OOM-killed perhaps */
	return h->shm->err;
}

static int holder_ask(struct holder *h, char op)
{
	if (write(h->req, &op, 1) != 1)
		return -ECHILD;
	return holder_wait(h);
}

struct holder *holder_start(const char *cg, size_t len, uint64_t seed, bool thp)
{
	struct holder *h = calloc(1, sizeof(*h));
	int to_child[2] = { -1, -1 }, from_child[2] = { -1, -1 }, err;

	if (!h)
		return NULL;
	/* A request to a holder that died must fail, not kill the test. */
	signal(SIGPIPE, SIG_IGN);
	h->pid = -1;
	h->req = h->resp = h->child_req = h->child_resp = -1;
	h->len = len;
	h->shm = mmap(NULL, sizeof(*h->shm), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (h->shm == MAP_FAILED || pipe2(to_child, O_CLOEXEC) ||
	    pipe2(from_child, O_CLOEXEC)) {
		tt_diag("holder: %s", strerror(errno));
		if (h->shm == MAP_FAILED)
			h->shm = NULL;
		holder_stop(h);
		return NULL;
	}
	memset(h->shm, 0, sizeof(*h->shm));
	h->shm->seed = seed;
	h->shm->thp = thp;
	h->req = to_child[1];
	h->resp = from_child[0];
	h->child_req = to_child[0];
	h->child_resp = from_child[1];
	h->pid = spawn_in(cg, holder_main, h);
	err = h->pid < 0 ? -errno : 0;
	close(h->child_req);
	close(h->child_resp);
	h->child_req = h->child_resp = -1;
	if (!err)
		err = holder_wait(h);
	if (err) {
		tt_diag("holder of %zu MB in %s failed: %s", len / MB,
			cg ? cg : "(own cgroup)", strerror(-err));
		holder_stop(h);
		return NULL;
	}
	return h;
}

int holder_count(struct holder *h, long counts[TT_MAX_NODES])
{
	int err = holder_ask(h, 'c');

	if (!err)
		memcpy(counts, h->shm->counts, sizeof(h->shm->counts));
	return err;
}

int holder_move(struct holder *h, int node)
{
	h->shm->node = node;
	return holder_ask(h, 'm');
}

long holder_check(struct holder *h)
{
	return holder_ask(h, 'k') ? -1 : h->shm->bad;
}

int holder_trim(struct holder *h, size_t chunk, size_t keep)
{
	if (!chunk || keep > chunk)
		return -EINVAL;
	h->shm->chunk = chunk;
	h->shm->keep = keep;
	return holder_ask(h, 't');
}

void holder_stop(struct holder *h)
{
	if (!h)
		return;
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		wait_child(h->pid);
	}
	if (h->req >= 0)
		close(h->req);
	if (h->resp >= 0)
		close(h->resp);
	if (h->child_req >= 0)
		close(h->child_req);
	if (h->child_resp >= 0)
		close(h->child_resp);
	if (h->shm)
		munmap(h->shm, sizeof(*h->shm));
	free(h);
}

/* ---- page cache written from inside a cgroup ----------------------------- */
struct file_writer {
	const char *path;
	size_t len;
};

static int file_writer_main(void *arg)
{
	const struct file_writer *w = arg;
	char *buf = map_anon(MB);
	int fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (!buf || fd < 0)
		return 1;
	for (size_t off = 0; off < w->len; off += MB) {
		fill_pages(buf, MB, off / MB);
		if (write(fd, buf, MB) != (ssize_t)MB)
			return 2;
	}
	return close(fd) ? 3 : 0;
}

int write_file_from(const char *cg, const char *path, size_t len)
{
	struct file_writer w = { .path = path, .len = len };

	return wait_child(spawn_in(cg, file_writer_main, &w));
}

/* ---- demotion on and off ------------------------------------------------- */
#define DEMOTION_ENABLED "/sys/kernel/mm/numa/demotion_enabled"
static int demotion_saved = -1;

/* The file reads "true" or "false". */
static int demotion_read(void)
{
	char buf[16];

	if (read_text(DEMOTION_ENABLED, buf, sizeof(buf)) <= 0)
		return -1;
	return buf[0] == 't';
}

int tt_set_demotion(bool on)
{
	int now = demotion_read();

	if (now < 0)
		return -1;
	if (demotion_saved < 0)
		demotion_saved = now;
	if (write_text(DEMOTION_ENABLED, on ? "1" : "0"))
		return -1;
	return demotion_read() == on ? 0 : -1;
}

void tt_restore_demotion(void)
{
	if (demotion_saved >= 0)
		write_text(DEMOTION_ENABLED, demotion_saved ? "1" : "0");
	demotion_saved = -1;
}

void touch_node(int node)
{
	size_t len = 2 * MB;
	void *p;

	if (bind_to_node(node))
		return;
	p = map_anon(len);
	if (p) {
		fill_pages(p, len, node);
		munmap(p, len);
	}
	unbind();
}

/* ---- MGLRU on and off ---------------------------------------------------- */
#define LRU_GEN_ENABLED "/sys/kernel/mm/lru_gen/enabled"
static int mglru_saved = -1;

int tt_set_mglru(bool on)
{
	long long caps = read_ll(LRU_GEN_ENABLED);

	if (caps == LLONG_MIN)
		return on ? -1 : 0;	/* no MGLRU: only "off" is possible */
	if (mglru_saved < 0)
		mglru_saved = caps & 1;
	if (write_text(LRU_GEN_ENABLED, on ? "y" : "n"))
		return -1;
	return (read_ll(LRU_GEN_ENABLED) & 1) == on ? 0 : -1;
}

void tt_restore_mglru(void)
{
	if (mglru_saved >= 0)
		write_text(LRU_GEN_ENABLED, mglru_saved ? "y" : "n");
	mglru_saved = -1;
}

// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

size_t check_pages(const void *buf, size_t len, uint64_t seed)
{
	size_t bad = 0;

	for (size_t off = 0, i = 0; off < len; off += page_size, i++) {
		const uint64_t *w = (const uint64_t *)((const char *)buf + off);

		if (w[0] != pattern(seed, i) || w[page_size / 8 - 1] != ~pattern(seed, i))
			bad++;
	}
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

long long cg1_numa_stat(const char *cg, const char *name, int node)
{
	static char buf[1 << 14];
	char path[512], key[64], nkey[16];
	char *line, *save;

	snprintf(path, sizeof(path), "%s/memory.numa_stat", cg);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return LLONG_MIN;
	snprintf(key, sizeof(key), "%s=", name);
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

/* ---- processes ------------------------------------------------------------ */
pid_t spawn_in(const char *cg, int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid)
		return pid;
	if (cg && cg_attach(cg, getpid())) {
		tt_diag("attach to %s failed", cg);
		_exit(126);
	}
	_exit(fn(arg));
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

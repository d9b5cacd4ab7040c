// SPDX-License-Identifier: GPL-2.0
/*
 * The engine of the reliability stress tests (issue 7), shared by
 * stress_v2.c and stress_v1.c, which supply what differs between the two
 * cgroup versions in a struct stress_ops: how to read a cgroup's top-tier
 * usage and check it against memory.numa_stat, and which limits to rewrite.
 * tests/Makefile links it (lib/stress.o) into those two programs only.
 *
 * What runs, for toptier.stress_seconds (kernel command line, default 30):
 *
 *   - A parent cgroup "tt_stress" with a nested "nest"; slots 0-5 are its
 *     children, slots 6-7 children of nest.  Slot cgroups are created and
 *     destroyed (members killed) at random.
 *   - 2..4 worker processes in the slots, each with a budget of
 *     WORKER_BUDGET, doing a random mix of: anonymous memory (with and
 *     without MADV_HUGEPAGE, sometimes first touched on a chosen node),
 *     shmem (memfd, MADV_HUGEPAGE), mlocked memory, files written with
 *     write(2) on tmpfs (shmem page cache) and on ramfs (page cache that is
 *     not shmem: the guest has no disk filesystem), move_pages(2) of random
 *     ranges (file pages through a shared mapping) and mbind(MPOL_MF_MOVE)
 *     to random nodes, MADV_DONTNEED / hole punches and tail truncations
 *     that split THPs, MADV_COLLAPSE, reading (NUMA hinting faults:
 *     promotion) and rewriting, and now and then a node0-bound allocation
 *     of up to PRESSURE_MAX (pressure: demotion).  Every page carries a
 *     pattern derived from the seed and its index; it is checked after
 *     every migration, on rewrites, and once more when the worker retires.
 *   - The parent's chaos loop: spawns, retires (SIGTERM, clean exit after a
 *     final check), kills (SIGKILL) and moves workers between cgroups,
 *     creates and destroys cgroups, rewrites top-tier limits, toggles
 *     kernel.numa_balancing 0/2, THP modes and MGLRU, rewrites
 *     vm.toptier_scale_factor, compacts node0 and unlinks the files of dead
 *     workers (their page cache first outlives its removed cgroup).
 *   - Quiescent points every 10..20 s and at the end: every worker is
 *     SIGSTOPped (and seen stopped), the chaos loop is paused (it is this
 *     thread), and every cgroup's top-tier usage must agree with
 *     memory.numa_stat summed over the top-tier nodes (ops->check; LAG
 *     and TOL below).
 *
 * Then, one case each: the run did what it should (no operation of the
 * chaos loop failed, pages were migrated), every quiescent point was
 * consistent, teardown leaves nothing (tt_stress at exactly 0 once the
 * workers retired and the cgroups were removed, no dying descendants),
 * no page was ever corrupted and no worker died unexpectedly (an OOM kill
 * included), the global counters came back, and the kernel log has no
 * complaint.
 *
 * Repeatable: every random decision, of the parent and of each worker,
 * comes from a splitmix64 stream derived from toptier.seed (printed first,
 * default from the clock).  The parent draws the same values step after
 * step, and worker n (the n-th spawned) the same operations, up to an
 * allocation failing or the pressure slot being taken; what differs from
 * run to run is timing: which live worker or cgroup a parent decision
 * lands on, when quiescent points fall, and the interleaving with kswapd,
 * khugepaged and NUMA balancing.
 *
 * Memory: at most MAX_WORKERS * WORKER_BUDGET + PRESSURE_MAX = 704 MB is
 * live at once (node0 has 1 GB, node1 2 GB), so demotion always has room
 * and nothing should be OOM-killed: an OOM kill fails the test.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tt.h"
#include "stress.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_KEEP_SIZE	0x01
#define FALLOC_FL_PUNCH_HOLE	0x02
#endif

#define NSLOTS		8	/* 0-5 under tt_stress, 6-7 under tt_stress/nest */
#define NEST_FIRST	6
#define MAX_WORKERS	4
#define MIN_WORKERS	2
#define WORKER_BUDGET	(96 * MB)
#define PRESSURE_MAX	(320 * MB)
#define W_REGIONS	8
#define W_FILES		4
#define FILES_DIR	"/tmp/tt_stress"	/* tmpfs: shmem page cache */
#define RAMFS_DIR	"/tmp/tt_stress_ramfs"	/* ramfs: plain page cache */
#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"
#define THP_SHMEM	"/sys/kernel/mm/transparent_hugepage/shmem_enabled"
#define NUMA_BALANCING	"/proc/sys/kernel/numa_balancing"
#define SCALE_FACTOR	"/proc/sys/vm/toptier_scale_factor"
#define DEMOTION	"/sys/kernel/mm/numa/demotion_enabled"
#define LRU_GEN		"/sys/kernel/mm/lru_gen/enabled"

/*
 * How far a cgroup's top-tier usage may be from memory.numa_stat at a
 * quiescent point.  memory.numa_stat is read from per-CPU batched
 * statistics: a read flushes only when more than MEMCG_CHARGE_BATCH (64)
 * pages x nr_cpus of updates are pending, and each CPU holds up to 63 more
 * before it reports them, so up to 64 * 2 + 63 * 2 pages (about 1 MiB on
 * the guest's 2 CPUs) may be unflushed.  v2's counter follows charges, and
 * a charged folio is not always on an LRU list: 31 small folios per CPU
 * wait in the LRU-add batches (248 KiB), and the workers being stopped
 * does not stop the kernel's own threads: khugepaged charges the THP it
 * collapses into before the THP goes on the LRU, and kswapd's demotion
 * takes a folio off the LRU until its copy is done (measured: exactly one
 * THP, 2048 kB).  1 MiB + 248 KiB + 2 MiB is under 4 MiB, the tolerance
 * of the other toptier tests.  The check polls until the difference is
 * within LAG, what the statistics alone explain (the periodic flush runs
 * every 2 s), and accepts up to TOL only at its deadline, with a note;
 * teardown, where nothing is in flight, wants exactly 0.
 */
/* What the statistics alone explain (the first two terms above). */
#define LAG		(1536LL * 1024)
#define SETTLE_ONE_S	10	/* deadline for one cgroup's agreement */
#define SLOW_STEP_S	10	/* a chaos step this long gets a diagnostic */
#define STOP_S		60	/* deadline for every worker to be seen stopped */
#define SETTLE_S	60	/* deadline for teardown to reach zero */

/* ---- seeded randomness -------------------------------------------------- */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t rnd(struct rng *r)
{
	return splitmix64(&r->s);
}

uint64_t rnd_below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static bool chance(struct rng *r, int percent)
{
	return (int)rnd_below(r, 100) < percent;
}

/* Pick an index from a table of weights. */
static int pick(struct rng *r, const int *weights, int n)
{
	int total = 0, x;

	for (int i = 0; i < n; i++)
		total += weights[i];
	x = (int)rnd_below(r, total);
	for (int i = 0; i < n; i++) {
		if (x < weights[i])
			return i;
		x -= weights[i];
	}
	return n - 1;
}

/* ---- node masks --------------------------------------------------------- */
static bool toptier_node[TT_MAX_NODES], memory_node[TT_MAX_NODES];
static int mem_nodes[TT_MAX_NODES], nmem_nodes, first_toptier = -1;

static bool read_nodes(void)
{
	char buf[128];

	if (read_text("/sys/devices/system/node/is_toptier", buf, sizeof(buf)) <= 0 ||
	    nodelist_parse(buf, toptier_node) <= 0)
		return false;
	if (read_text("/sys/devices/system/node/has_memory", buf, sizeof(buf)) <= 0 ||
	    nodelist_parse(buf, memory_node) <= 0)
		return false;
	for (int n = 0; n < TT_MAX_NODES; n++) {
		if (memory_node[n])
			mem_nodes[nmem_nodes++] = n;
		if (toptier_node[n] && first_toptier < 0)
			first_toptier = n;
	}
	return nmem_nodes >= 2 && first_toptier >= 0;
}

/* memory.numa_stat entries summed over the top-tier nodes, or LLONG_MIN. */
long long numa_stat_toptier(const char *cg, const char *const *names, int nnames)
{
	return cg_numa_stat_sum(cg, toptier_node, names, nnames);
}

/* ---- the pattern ------------------------------------------------------------ */
#define WORDS_PER_PAGE 8	/* checked words per page, spread over the page */

static uint64_t pat_word(uint64_t pat, size_t page, int k)
{
	uint64_t x = pat ^ ((uint64_t)page * WORDS_PER_PAGE + k) * 0xd1b54a32d192ed03ULL;

	return splitmix64(&x);
}

static void pat_fill(char *buf, size_t first, size_t npages, uint64_t pat)
{
	size_t stride = page_size / WORDS_PER_PAGE / 8;

	for (size_t i = first; i < first + npages; i++) {
		uint64_t *w = (uint64_t *)(buf + i * page_size);

		for (int k = 0; k < WORDS_PER_PAGE; k++)
			w[k * stride] = pat_word(pat, i, k);
	}
}

/* Bad pages among [first, first + npages); *first_bad gets the first. */
static size_t pat_check(const char *buf, size_t first, size_t npages, uint64_t pat,
			size_t *first_bad)
{
	size_t stride = page_size / WORDS_PER_PAGE / 8, bad = 0;

	for (size_t i = first; i < first + npages; i++) {
		const volatile uint64_t *w = (const uint64_t *)(buf + i * page_size);

		for (int k = 0; k < WORDS_PER_PAGE; k++)
			if (w[k * stride] != pat_word(pat, i, k)) {
				if (!bad++ && first_bad)
					*first_bad = i;
				break;
			}
	}
	return bad;
}

/* ---- shared between the parent and the workers ---------------------------- */
struct shared {
	int pressure_owner;		/* serial of the worker under pressure, 0 */
	long ops, migrations, migrated_pages, move_errors, verified_pages;
	long bad_pages, enomem, pressure_runs, collapses;
	long files_written, thp_regions, shmem_regions, mlocked_regions;
};
static struct shared *sh;

#define ADD(field, v) __atomic_fetch_add(&sh->field, (v), __ATOMIC_RELAXED)

/* ---- a worker ------------------------------------------------------------- */
enum rkind { R_ANON, R_SHMEM, R_MLOCK };
static const char *const rkind_name[] = { "anon", "shmem", "mlocked" };

struct region {
	char *map, *buf;	/* the mapping, and the data in it (2 MB aligned) */
	size_t maplen, len;
	uint64_t pat;
	enum rkind kind;
	bool thp;
	int fd;			/* memfd of a shmem region, or -1 */
};

struct wfile {
	char path[128];
	size_t len;
	uint64_t pat;
};

struct worker {
	int serial;
	struct rng r;
	struct region reg[W_REGIONS];
	struct wfile file[W_FILES];
	size_t used;
	char *iobuf;		/* 1 MB for file I/O */
};

static volatile sig_atomic_t worker_retire;

static void on_sigterm(int sig)
{
	(void)sig;
	worker_retire = 1;
}

static size_t npages_of(size_t len)
{
	return len / page_size;
}

static int rnd_node(struct rng *r)
{
	return mem_nodes[rnd_below(r, nmem_nodes)];
}

/* Report bad pages; they fail the worker (exit 3). */
static bool w_bad(struct worker *w, const char *what, const char *after, size_t bad,
		  size_t first_bad, size_t npages)
{
	if (!bad)
		return false;
	ADD(bad_pages, (long)bad);
	tt_diag("worker %d: %zu of %zu pages of a %s corrupted after %s (first bad: page %zu)",
		w->serial, bad, npages, what, after, first_bad);
	return true;
}

static bool w_check_region(struct worker *w, struct region *g, size_t first, size_t n,
			   const char *after)
{
	size_t first_bad = 0, bad = pat_check(g->buf, first, n, g->pat, &first_bad);

	ADD(verified_pages, (long)n);
	return w_bad(w, rkind_name[g->kind], after, bad, first_bad, n);
}

static bool w_check_file(struct worker *w, struct wfile *f, const char *after)
{
	int fd = open(f->path, O_RDONLY);
	size_t bad = 0, first_bad = 0, n = npages_of(f->len);

	if (fd < 0) {
		tt_diag("worker %d: cannot open %s: %s", w->serial, f->path, strerror(errno));
		return true;
	}
	for (size_t off = 0; off < f->len; off += MB) {
		size_t chunk = f->len - off < MB ? f->len - off : MB, fb = 0, b;

		if (pread(fd, w->iobuf, chunk, off) != (ssize_t)chunk) {
			tt_diag("worker %d: short read of %s", w->serial, f->path);
			close(fd);
			return true;
		}
		/* Page indices are file-relative: check at offset off. */
		b = pat_check(w->iobuf - off, off / page_size, npages_of(chunk), f->pat, &fb);
		if (b && !bad)
			first_bad = fb;
		bad += b;
	}
	close(fd);
	ADD(verified_pages, (long)n);
	return w_bad(w, "file", after, bad, first_bad, n);
}

static struct region *w_free_region_slot(struct worker *w)
{
	for (int i = 0; i < W_REGIONS; i++)
		if (!w->reg[i].buf)
			return &w->reg[i];
	return NULL;
}

static struct region *w_some_region(struct worker *w)
{
	int idx[W_REGIONS], n = 0;

	for (int i = 0; i < W_REGIONS; i++)
		if (w->reg[i].buf && w->reg[i].len)
			idx[n++] = i;
	return n ? &w->reg[idx[rnd_below(&w->r, n)]] : NULL;
}

static struct wfile *w_some_file(struct worker *w, bool used)
{
	int idx[W_FILES], n = 0;

	for (int i = 0; i < W_FILES; i++)
		if (!!w->file[i].len == used)
			idx[n++] = i;
	return n ? &w->file[idx[rnd_below(&w->r, n)]] : NULL;
}

static void w_drop_region(struct worker *w, struct region *g)
{
	munmap(g->map, g->maplen);
	if (g->fd >= 0)
		close(g->fd);
	w->used -= g->len;
	memset(g, 0, sizeof(*g));
	g->fd = -1;
}

static void w_drop_file(struct worker *w, struct wfile *f)
{
	unlink(f->path);
	w->used -= f->len;
	memset(f, 0, sizeof(*f));
}

/* A new region: anon (THP or not), shmem, or a small mlocked one. */
static void op_alloc(struct worker *w, enum rkind kind)
{
	struct region *g = w_free_region_slot(w);
	size_t len, huge = 2 * MB;
	bool thp = kind != R_MLOCK && chance(&w->r, 60);
	int fd = -1, node = -1;
	char *map;

	switch (kind) {
	case R_ANON:
		len = (1 + rnd_below(&w->r, 16)) * huge;	/* 2..32 MB */
		break;
	case R_SHMEM:
		len = (1 + rnd_below(&w->r, 8)) * huge;		/* 2..16 MB */
		break;
	default:
		len = (1 + rnd_below(&w->r, 4)) * MB;		/* 1..4 MB */
	}
	if (chance(&w->r, 30))
		node = rnd_node(&w->r);	/* first touch on a chosen node */
	if (!g || w->used + len > WORKER_BUDGET)
		return;
	if (kind == R_SHMEM) {
		fd = memfd_create("tt_stress", 0);
		if (fd < 0 || ftruncate(fd, len)) {
			if (fd >= 0)
				close(fd);
			ADD(enomem, 1);
			return;
		}
		/* Reserve an aligned range, then map the memfd over it. */
		map = mmap(NULL, len + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		g->buf = map == MAP_FAILED ? NULL :
			 (char *)(((uintptr_t)map + huge - 1) & ~(uintptr_t)(huge - 1));
		if (g->buf && mmap(g->buf, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				   fd, 0) == MAP_FAILED)
			g->buf = NULL;
	} else {
		map = mmap(NULL, len + huge, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		g->buf = map == MAP_FAILED ? NULL :
			 (char *)(((uintptr_t)map + huge - 1) & ~(uintptr_t)(huge - 1));
	}
	if (!g->buf) {
		if (map != MAP_FAILED)
			munmap(map, len + huge);
		if (fd >= 0)
			close(fd);
		ADD(enomem, 1);
		return;
	}
	/*
	 * Keep exactly [buf, buf + len) mapped: whatever a region gives back
	 * (slop, a trimmed tail) may be reused by a later mapping at once.
	 */
	if (g->buf > map)
		munmap(map, g->buf - map);
	if (map + len + huge > g->buf + len)
		munmap(g->buf + len, map + len + huge - (g->buf + len));
	g->map = g->buf;
	g->maplen = len;
	g->len = len;
	g->kind = kind;
	g->thp = thp;
	g->fd = fd;
	g->pat = rnd(&w->r);
	w->used += len;
	madvise(g->buf, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	if (node >= 0)
		place_on_node(g->buf, len, node);
	if (kind == R_MLOCK && mlock(g->buf, len))
		ADD(enomem, 1);
	pat_fill(g->buf, 0, npages_of(len), g->pat);
	if (node >= 0)
		reset_policy(g->buf, len);
	ADD(thp_regions, thp);
	ADD(shmem_regions, kind == R_SHMEM);
	ADD(mlocked_regions, kind == R_MLOCK);
}

/* Write a file with write(2): on tmpfs or on ramfs. */
static void op_write_file(struct worker *w)
{
	struct wfile *f = w_some_file(w, false);
	size_t len = (1 + rnd_below(&w->r, 8)) * MB;
	bool ramfs = chance(&w->r, 40);
	uint64_t pat = rnd(&w->r);
	int fd;

	if (!f || w->used + len > WORKER_BUDGET)
		return;
	snprintf(f->path, sizeof(f->path), "%s/w%d_%d", ramfs ? RAMFS_DIR : FILES_DIR,
		 w->serial, (int)(f - w->file));
	fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	for (size_t off = 0; off < len; off += MB) {
		memset(w->iobuf, 0, MB);
		pat_fill(w->iobuf - off, off / page_size, npages_of(MB), pat);
		if (write(fd, w->iobuf, MB) != (ssize_t)MB) {
			ADD(enomem, 1);	/* ENOSPC: /tmp is full */
			close(fd);
			unlink(f->path);
			f->path[0] = 0;
			return;
		}
	}
	close(fd);
	f->len = len;
	f->pat = pat;
	w->used += len;
	ADD(files_written, 1);
}

/* move_pages(2) of nodes[] for each page; counts pages that got there. */
static void w_move_pages(char *buf, size_t npages, int node)
{
	static void *pages[4096];
	static int nodes[4096], status[4096];

	for (size_t i = 0; i < npages; i += 4096) {
		size_t n = npages - i < 4096 ? npages - i : 4096;
		long moved = 0;

		for (size_t j = 0; j < n; j++) {
			pages[j] = buf + (i + j) * page_size;
			nodes[j] = node;
		}
		if (syscall(SYS_move_pages, 0, n, pages, nodes, status, 0) < 0) {
			ADD(move_errors, 1);
			continue;
		}
		for (size_t j = 0; j < n; j++)
			moved += status[j] == node;
		ADD(migrated_pages, moved);
	}
	ADD(migrations, 1);
}

/* Migrate a random range of a region or file to a random node; true if
 * the data was corrupted. */
static bool op_move(struct worker *w, bool file, bool with_mbind)
{
	int node = rnd_node(&w->r);
	char after[64];

	snprintf(after, sizeof(after), "%s to node%d", with_mbind ? "mbind" : "move_pages", node);
	if (file) {
		struct wfile *f = w_some_file(w, true);
		int fd;
		char *m;

		if (!f || (fd = open(f->path, O_RDWR)) < 0)
			return false;
		m = mmap(NULL, f->len, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			return false;
		touch_pages(m, f->len);	/* move_pages moves mapped pages only */
		w_move_pages(m, npages_of(f->len), node);
		munmap(m, f->len);
		return w_check_file(w, f, after);
	} else {
		struct region *g = w_some_region(w);
		size_t n, first, count;

		if (!g)
			return false;
		n = npages_of(g->len);
		first = rnd_below(&w->r, n);
		count = 1 + rnd_below(&w->r, n - first);
		if (with_mbind) {
			place_on_node(g->buf + first * page_size, count * page_size, node);
			reset_policy(g->buf + first * page_size, count * page_size);
			ADD(migrations, 1);
		} else {
			w_move_pages(g->buf + first * page_size, count, node);
		}
		return w_check_region(w, g, 0, n, after);
	}
}

/* Drop part of a region: a tail (munmap, truncate) or a hole (refilled). */
static bool op_trim(struct worker *w)
{
	struct region *g = w_some_region(w);
	size_t n, first, count;

	if (!g || (n = npages_of(g->len)) < 2)
		return false;
	first = 1 + rnd_below(&w->r, n - 1);
	count = 1 + rnd_below(&w->r, n - first);
	if (chance(&w->r, 50)) {
		/* The tail from first: splits a THP unless 2 MB aligned. */
		munmap(g->buf + first * page_size, (n - first) * page_size);
		if (g->fd >= 0 && ftruncate(g->fd, first * page_size))
			ADD(enomem, 1);
		w->used -= g->len - first * page_size;
		g->len = g->maplen = first * page_size;
		return w_check_region(w, g, 0, first, "trimming its tail");
	}
	/* A hole: the pages are dropped and written again. */
	if (g->fd >= 0)
		fallocate(g->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			  first * page_size, count * page_size);
	else if (g->kind != R_MLOCK)
		madvise(g->buf + first * page_size, count * page_size, MADV_DONTNEED);
	pat_fill(g->buf, first, count, g->pat);
	return w_check_region(w, g, 0, n, "a hole punched and refilled");
}

/*
 * Pressure: allocate up to PRESSURE_MAX bound to the top-tier node, so
 * that node0 runs short and kswapd demotes (the pressure pages and
 * everybody else's).  One worker at a time.
 */
static bool op_pressure(struct worker *w)
{
	size_t len = (128 + rnd_below(&w->r, (PRESSURE_MAX / MB) - 128 + 1)) * MB;
	uint64_t pat = rnd(&w->r);
	bool bad = false;
	char *buf;

	if (!__sync_bool_compare_and_swap(&sh->pressure_owner, 0, w->serial))
		return false;
	if (bind_to_node(first_toptier) == 0) {
		buf = map_anon(len);
		if (buf) {
			pat_fill(buf, 0, npages_of(len), pat);
			unbind();
			{
				size_t fb = 0, nbad = pat_check(buf, 0, npages_of(len), pat, &fb);

				ADD(verified_pages, (long)npages_of(len));
				bad = w_bad(w, "node0-bound region", "pressure", nbad, fb,
					    npages_of(len));
			}
			munmap(buf, len);
			ADD(pressure_runs, 1);
		}
		unbind();
	}
	__sync_bool_compare_and_swap(&sh->pressure_owner, w->serial, 0);
	return bad;
}

enum wop {
	OP_ANON, OP_SHMEM, OP_MLOCK, OP_FILE, OP_MOVE, OP_MBIND, OP_MOVE_FILE,
	OP_VERIFY, OP_VERIFY_FILE, OP_TOUCH, OP_REWRITE, OP_TRIM, OP_COLLAPSE,
	OP_FREE, OP_FREE_FILE, OP_PRESSURE, OP_NAP, NR_WOPS
};

static const int wop_weight[NR_WOPS] = {
	[OP_ANON] = 10, [OP_SHMEM] = 5, [OP_MLOCK] = 1, [OP_FILE] = 5,
	[OP_MOVE] = 14, [OP_MBIND] = 4, [OP_MOVE_FILE] = 4, [OP_VERIFY] = 6,
	[OP_VERIFY_FILE] = 3, [OP_TOUCH] = 8, [OP_REWRITE] = 3, [OP_TRIM] = 5,
	[OP_COLLAPSE] = 2, [OP_FREE] = 6, [OP_FREE_FILE] = 3, [OP_PRESSURE] = 2,
	[OP_NAP] = 4,
};

/* Check and free everything; 0, or 3 when data was corrupted. */
static int w_retire(struct worker *w, bool failed)
{
	for (int i = 0; i < W_REGIONS; i++)
		if (w->reg[i].buf) {
			failed |= w_check_region(w, &w->reg[i], 0, npages_of(w->reg[i].len),
						 "everything (final check)");
			w_drop_region(w, &w->reg[i]);
		}
	for (int i = 0; i < W_FILES; i++)
		if (w->file[i].len) {
			failed |= w_check_file(w, &w->file[i], "everything (final check)");
			w_drop_file(w, &w->file[i]);
		}
	return failed ? 3 : 0;
}

struct worker_arg {
	int serial;
	uint64_t seed;
};

static int worker_main(void *arg)
{
	const struct worker_arg *a = arg;
	struct worker *w = calloc(1, sizeof(*w));
	bool failed = false;

	if (!w)
		return 4;
	{
		sigset_t term;

		/* The parent blocks SIGTERM, so none is lost before this. */
		signal(SIGTERM, on_sigterm);
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		sigprocmask(SIG_UNBLOCK, &term, NULL);
	}
	w->serial = a->serial;
	w->r.s = a->seed;
	for (int i = 0; i < W_REGIONS; i++)
		w->reg[i].fd = -1;
	w->iobuf = map_anon(MB);
	if (!w->iobuf)
		return 4;
	while (!worker_retire && !failed) {
		struct region *g;
		struct wfile *f;

		ADD(ops, 1);
		switch (pick(&w->r, wop_weight, NR_WOPS)) {
		case OP_ANON:
			op_alloc(w, R_ANON);
			break;
		case OP_SHMEM:
			op_alloc(w, R_SHMEM);
			break;
		case OP_MLOCK:
			op_alloc(w, R_MLOCK);
			break;
		case OP_FILE:
			op_write_file(w);
			break;
		case OP_MOVE:
			failed |= op_move(w, false, false);
			break;
		case OP_MBIND:
			failed |= op_move(w, false, true);
			break;
		case OP_MOVE_FILE:
			failed |= op_move(w, true, false);
			break;
		case OP_VERIFY:
			g = w_some_region(w);
			if (g)
				failed |= w_check_region(w, g, 0, npages_of(g->len), "a while");
			break;
		case OP_VERIFY_FILE:
			f = w_some_file(w, true);
			if (f)
				failed |= w_check_file(w, f, "a while");
			break;
		case OP_TOUCH:
			g = w_some_region(w);
			for (int i = 0; g && i < 3; i++)
				touch_pages(g->buf, g->len);
			break;
		case OP_REWRITE:
			g = w_some_region(w);
			if (g) {
				failed |= w_check_region(w, g, 0, npages_of(g->len), "a while");
				g->pat = rnd(&w->r);
				pat_fill(g->buf, 0, npages_of(g->len), g->pat);
			}
			break;
		case OP_TRIM:
			failed |= op_trim(w);
			break;
		case OP_COLLAPSE:
			g = w_some_region(w);
			if (g && g->kind != R_MLOCK) {
				if (!madvise(g->buf, g->len, MADV_COLLAPSE))
					ADD(collapses, 1);
				failed |= w_check_region(w, g, 0, npages_of(g->len),
							 "MADV_COLLAPSE");
			}
			break;
		case OP_FREE:
			g = w_some_region(w);
			if (g) {
				failed |= w_check_region(w, g, 0, npages_of(g->len), "a while");
				w_drop_region(w, g);
			}
			break;
		case OP_FREE_FILE:
			f = w_some_file(w, true);
			if (f) {
				failed |= w_check_file(w, f, "a while");
				w_drop_file(w, f);
			}
			break;
		case OP_PRESSURE:
			failed |= op_pressure(w);
			break;
		default:
			usleep(rnd_below(&w->r, 50) * 1000);	/* let others run */
		}
	}
	return w_retire(w, failed) ? 3 : 0;
}

/* ---- the parent's view ---------------------------------------------------- */
struct slot {
	char *path;
	int gen;
};

struct wproc {
	pid_t pid;
	int serial, slot;
	bool doomed;		/* we kill it: SIGKILL is expected */
	bool retiring;		/* SIGTERM sent */
};

static const struct stress_ops *ops;
static struct rng prng;
static uint64_t seed;
static long stress_seconds = 30;
static char *top_cg, *nest_cg;
static struct slot slots[NSLOTS];
static struct wproc workers[MAX_WORKERS];
static int next_serial = 1;
static bool ramfs_mounted;
static double run_start;

/* What happened, for the verdicts. */
static struct {
	bool ran;
	int quiescent_points, quiescent_failures;
	long long worst_diff;
	int workers_spawned, workers_ok, workers_killed, workers_corrupt, workers_bad;
	int cg_created, cg_destroyed, moves, limit_writes, chaos_errors;
	int scale_writes, balancing_toggles, thp_toggles, mglru_toggles, compactions;
	int orphan_unlinks, slow_steps;
} st;
static char last_step[256];	/* what the current chaos step does */

/* Saved settings, restored in teardown. */
static char saved_scale[32], saved_balancing[16], saved_thp[64], saved_thp_shmem[64];
static char saved_demotion[16];
static int saved_lru_gen = -1;

/* Counters compared before and after. */
struct counters {
	long long vm[16];
	long long memfree, kernel, toptier_free, oom_kill, pcp;
	int cgroups;
};
static struct counters before;

static const char *const vm_keys[] = {
	"nr_anon_pages", "nr_file_pages", "nr_shmem", "nr_mlock", "nr_unevictable",
	"nr_anon_transparent_hugepages", "nr_shmem_hugepages", "nr_isolated_anon",
	"nr_isolated_file",
};

/*
 * Tolerances of the global counters, in pages: the parent's own heap and
 * stdio may grow by a few pages between the two snapshots; the rest must
 * come back exactly (THPs, mlocked and isolated pages: nobody else in the
 * guest makes them).
 */
static const long long vm_tol[] = { 256, 256, 256, 0, 0, 0, 0, 0, 0 };

static long long cmdline_ll(const char *key, long long def, bool *found)
{
	static char buf[4096];
	char *p;

	if (found)
		*found = false;
	if (read_text("/proc/cmdline", buf, sizeof(buf)) < 0)
		return def;
	p = strstr(buf, key);
	if (!p)
		return def;
	if (found)
		*found = true;
	return strtoll(p + strlen(key), NULL, 0);
}

static uint64_t cmdline_seed(bool *found)
{
	static char buf[4096];
	char *p;

	*found = false;
	if (read_text("/proc/cmdline", buf, sizeof(buf)) < 0 || !(p = strstr(buf, "toptier.seed=")))
		return 0;
	*found = true;
	return strtoull(p + strlen("toptier.seed="), NULL, 0);
}

static long long meminfo(const char *key)
{
	long long v = file_key("/proc/meminfo", key);

	return v == LLONG_MIN ? v : v * 1024;
}

static int count_memory_cgroups(void)
{
	static char buf[4096];
	char *p;

	if (read_text("/proc/cgroups", buf, sizeof(buf)) < 0 || !(p = strstr(buf, "\nmemory")))
		return -1;
	{
		int hier, num;

		if (sscanf(p + 1, "memory %d %d", &hier, &num) != 2)
			return -1;
		return num;
	}
}

/*
 * Free pages on the per-CPU lists (the "count:" of each pageset in
 * /proc/zoneinfo, in pages), all nodes and top-tier nodes: MemFree does
 * not include them, and since 6.7 the lists grow to many MB (THPs
 * included) after bursts of frees and shrink back only slowly.
 */
static void pcp_free(long long *all, long long *toptier)
{
	static char buf[1 << 18];
	char *line, *save;
	int node = -1;
	long long v;

	*all = *toptier = 0;
	if (read_text("/proc/zoneinfo", buf, sizeof(buf)) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "Node %d,", &node) == 1)
			continue;
		if (sscanf(line, " count: %lld", &v) == 1 && node >= 0 && node < TT_MAX_NODES) {
			*all += v * page_size;
			if (toptier_node[node])
				*toptier += v * page_size;
		}
	}
}

static void take_counters(struct counters *c)
{
	long long pcp, pcp_top;

	write_text("/proc/sys/vm/stat_refresh", "1");	/* fold the per-CPU deltas */
	for (size_t i = 0; i < ARRAY_SIZE(vm_keys); i++)
		c->vm[i] = vmstat(vm_keys[i]);
	pcp_free(&pcp, &pcp_top);
	c->pcp = pcp;
	c->memfree = meminfo("MemFree") + pcp;
	/* Kernel memory that may grow for good (caches, per-CPU chunks). */
	c->kernel = meminfo("Slab") + meminfo("KernelStack") + meminfo("PageTables") +
		    meminfo("Percpu");
	c->toptier_free = meminfo("TopTierFree") + pcp_top;
	c->oom_kill = vmstat("oom_kill");
	c->cgroups = count_memory_cgroups();
}

/* ---- settings ------------------------------------------------------------- */
static void save_setting(const char *path, char *buf, size_t len)
{
	if (read_text(path, buf, len) <= 0)
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/* "always [madvise] never" -> "madvise" */
static void bracketed(char *buf)
{
	char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;

	if (l && r) {
		memmove(buf, l + 1, r - l - 1);
		buf[r - l - 1] = 0;
	}
}

static void chaos_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void chaos_error(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	st.chaos_errors++;
	tt_diag("chaos: %s", line);
}

static void set_or_complain(const char *path, const char *val)
{
	int err = write_text(path, val);

	if (err)
		chaos_error("write '%s' to %s: %s", val, path, strerror(-err));
}

static void restore_settings(void)
{
	if (saved_scale[0])
		write_text(SCALE_FACTOR, saved_scale);
	if (saved_balancing[0])
		write_text(NUMA_BALANCING, saved_balancing);
	if (saved_thp[0])
		write_text(THP_ENABLED, saved_thp);
	if (saved_thp_shmem[0])
		write_text(THP_SHMEM, saved_thp_shmem);
	if (saved_demotion[0])
		write_text(DEMOTION, saved_demotion[0] == 't' ? "1" : "0");
	if (saved_lru_gen >= 0)
		write_text(LRU_GEN, saved_lru_gen ? "y" : "n");
}

/* ---- cgroups -------------------------------------------------------------- */
static int nlive_slots(void)
{
	int n = 0;

	for (int i = 0; i < NSLOTS; i++)
		n += !!slots[i].path;
	return n;
}

static bool slot_create(int i)
{
	char name[32];

	snprintf(name, sizeof(name), "c%dg%d", i, ++slots[i].gen);
	slots[i].path = cg_create(i >= NEST_FIRST ? nest_cg : top_cg, name);
	if (!slots[i].path) {
		chaos_error("cannot create cgroup %s", name);
		return false;
	}
	st.cg_created++;
	return true;
}

/* ---- workers -------------------------------------------------------------- */
static int nworkers(void)
{
	int n = 0;

	for (int i = 0; i < MAX_WORKERS; i++)
		n += workers[i].pid > 0;
	return n;
}

/* Account for a worker that ended with wait status st_. */
static void worker_ended(struct wproc *p, int status)
{
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;

	__sync_bool_compare_and_swap(&sh->pressure_owner, p->serial, 0);
	if (sig == SIGKILL && p->doomed) {
		st.workers_killed++;
	} else if (!sig && code == 0) {
		st.workers_ok++;
	} else if (!sig && code == 3) {
		st.workers_corrupt++;
		tt_diag("worker %d exited: its data was corrupted", p->serial);
	} else {
		st.workers_bad++;
		tt_diag("worker %d ended unexpectedly: %s %d%s; recorded in slot %d (%s)",
			p->serial, sig ? "signal" : "exit code", sig ? sig : code,
			sig == SIGKILL ? " (OOM kill?)" : "", p->slot,
			slots[p->slot].path ? strrchr(slots[p->slot].path, '/') + 1 : "removed");
	}
	p->pid = 0;
}

static void reap_workers(bool block)
{
	for (int i = 0; i < MAX_WORKERS; i++) {
		struct wproc *p = &workers[i];
		int status;

		if (p->pid <= 0)
			continue;
		if (waitpid(p->pid, &status, block ? 0 : WNOHANG) == p->pid)
			worker_ended(p, status);
	}
}

/*
 * Name the live workers that slot i's cgroup.procs lists although the
 * bookkeeping has them elsewhere: cg_destroy() SIGKILLs them, and they end
 * "unexpectedly" (as they should: the bookkeeping was wrong).
 */
static void report_strays(int i)
{
	char procs[512], buf[4096];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", slots[i].path);
	if (read_text(procs, buf, sizeof(buf)) <= 0)
		return;
	for (char *q = buf, *end; *q; q = end + (*end == '\n')) {
		long pid = strtol(q, &end, 10);

		if (end == q)
			break;
		for (int w = 0; w < MAX_WORKERS; w++)
			if (workers[w].pid == pid)
				tt_diag("worker %d (pid %ld) is in %s, recorded in slot %d: "
					"removing %s kills it", workers[w].serial, pid,
					strrchr(slots[i].path, '/') + 1, workers[w].slot,
					strrchr(slots[i].path, '/') + 1);
	}
}

/* Kill the members of slot i (ours, marked doomed first), remove it. */
static bool slot_destroy(int i)
{
	char *path = slots[i].path;
	bool ok;

	for (int w = 0; w < MAX_WORKERS; w++)
		if (workers[w].pid > 0 && workers[w].slot == i) {
			workers[w].doomed = true;
			kill(workers[w].pid, SIGKILL);
			kill(workers[w].pid, SIGCONT);
		}
	for (int w = 0; w < MAX_WORKERS; w++)
		if (workers[w].pid > 0 && workers[w].slot == i) {
			int status;

			if (waitpid(workers[w].pid, &status, 0) == workers[w].pid)
				worker_ended(&workers[w], status);
		}
	report_strays(i);
	ok = cg_destroy(path) == 0 && !path_exists(path);
	if (!ok)
		chaos_error("cannot remove %s", path);
	else
		st.cg_destroyed++;
	free(path);
	slots[i].path = NULL;
	return ok;
}

static bool serial_live(int serial)
{
	for (int i = 0; i < MAX_WORKERS; i++)
		if (workers[i].pid > 0 && workers[i].serial == serial)
			return true;
	return false;
}

/* Remove the files of workers that are gone (killed ones leave theirs). */
static int unlink_orphans(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];
	int n = 0, serial;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "w%d_", &serial) == 1 && !serial_live(serial)) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			n += unlink(path) == 0;
		}
	closedir(d);
	return n;
}

/* ---- quiescent points ----------------------------------------------------- */
/* SIGSTOP every worker and wait until each is seen stopped (or gone). */
static bool stop_workers(void)
{
	double deadline = now_s() + STOP_S;
	bool stopped[MAX_WORKERS] = { false };
	bool all;

	for (int i = 0; i < MAX_WORKERS; i++)
		if (workers[i].pid > 0)
			kill(workers[i].pid, SIGSTOP);
	do {
		all = true;
		for (int i = 0; i < MAX_WORKERS; i++) {
			struct wproc *p = &workers[i];
			int status;
			pid_t r;

			if (p->pid <= 0 || stopped[i])
				continue;
			r = waitpid(p->pid, &status, WNOHANG | WUNTRACED);
			if (r == p->pid && WIFSTOPPED(status))
				stopped[i] = true;
			else if (r == p->pid)
				worker_ended(p, status);
			else
				all = false;
		}
		if (!all)
			usleep(20 * 1000);	/* poll interval */
	} while (!all && now_s() < deadline);
	if (!all)
		tt_diag("some workers did not stop within %d s", STOP_S);
	return all;
}

static void continue_workers(void)
{
	for (int i = 0; i < MAX_WORKERS; i++)
		if (workers[i].pid > 0)
			kill(workers[i].pid, SIGCONT);
}

/*
 * Poll one cgroup until ops->check() holds with the difference within LAG
 * (what the statistics alone explain), and accept up to TOL only at the
 * deadline: a folio in flight is gone within a second, so a difference
 * that stays is reported even when it passes.
 */
static bool settle_cgroup(const char *cg, double deadline, int point, long long *diff)
{
	char why[512] = "", first[512] = "";
	long long usage = 0, ref = 0;
	double t0 = now_s();
	bool ok;
	int tries = 0;

	do {
		tries++;
		ok = ops->check(cg, &usage, &ref, why, sizeof(why));
		*diff = usage - ref;
		if (ok && llabs(*diff) <= LAG) {
			if (tries > 1)
				tt_diag("point %d: %s agreed after %.1f s (%d reads); first read: %s",
					point, strrchr(cg, '/') + 1, now_s() - t0, tries, first);
			break;
		}
		if (tries == 1)
			memcpy(first, why, sizeof(first));
		usleep(100 * 1000);	/* poll interval */
	} while (now_s() < deadline);
	if (ok && llabs(*diff) > LAG)
		tt_diag("point %d: %s still %+lld kB off after %.0f s (within %lld kB): %s", point,
			strrchr(cg, '/') + 1, *diff / 1024, now_s() - t0, TOL / 1024, why);
	if (!ok) {
		tt_diag("point %d: %s: top-tier usage disagrees with memory.numa_stat for %.0f s: %s",
			point, strrchr(cg, '/') + 1, now_s() - t0, why);
		return false;
	}
	if (llabs(*diff) > st.worst_diff)
		st.worst_diff = llabs(*diff);
	return true;
}

static bool quiescent_point(void)
{
	double t0 = now_s(), deadline;
	int point = ++st.quiescent_points, bad = 0, n = 0;
	char line[1024];
	size_t off = 0;

	if (!stop_workers()) {
		st.quiescent_failures++;
		continue_workers();
		return false;
	}
	line[0] = 0;
	for (int i = -2; i < NSLOTS; i++) {
		const char *cg = i == -2 ? top_cg : i == -1 ? nest_cg : slots[i].path;
		long long u, diff = 0;

		if (!cg)
			continue;
		n++;
		deadline = now_s() + SETTLE_ONE_S;
		if (!settle_cgroup(cg, deadline, point, &diff))
			bad++;
		u = ops->usage(cg);
		if (off < sizeof(line) - 64)
			off += snprintf(line + off, sizeof(line) - off, " %s=%lldM",
					strrchr(cg, '/') + 1, u == LLONG_MIN ? -1 : u / (long long)MB);
		if (diff && off < sizeof(line) - 64)
			off += snprintf(line + off, sizeof(line) - off, "(%+lldk)", diff / 1024);
	}
	tt_diag("point %d at %.0f s (%.1f s): %d cgroups, %d workers, %s, top-tier usage%s",
		point, t0 - run_start, now_s() - t0, n, nworkers(),
		bad ? "MISMATCH" : "consistent", line);
	continue_workers();
	if (bad)
		st.quiescent_failures++;
	return !bad;
}

/* ---- the chaos loop ------------------------------------------------------- */
enum cop {
	C_SPAWN, C_RETIRE, C_KILL, C_MOVE, C_CREATE, C_DESTROY, C_LIMIT, C_SCALE,
	C_BALANCING, C_THP, C_MGLRU, C_COMPACT, C_ORPHANS, C_NAP, NR_COPS
};

static const int cop_weight[NR_COPS] = {
	[C_SPAWN] = 6, [C_RETIRE] = 2, [C_KILL] = 1, [C_MOVE] = 10, [C_CREATE] = 5,
	[C_DESTROY] = 3, [C_LIMIT] = 14, [C_SCALE] = 4, [C_BALANCING] = 3, [C_THP] = 2,
	[C_MGLRU] = 1, [C_COMPACT] = 1, [C_ORPHANS] = 2, [C_NAP] = 6,
};

/* The x-th live slot (x taken modulo their number), or -1. */
static int live_slot_from(uint64_t x)
{
	int idx[NSLOTS], n = 0;

	for (int i = 0; i < NSLOTS; i++)
		if (slots[i].path)
			idx[n++] = i;
	return n ? idx[x % n] : -1;
}

static struct wproc *worker_from(uint64_t x)
{
	int idx[MAX_WORKERS], n = 0;

	for (int i = 0; i < MAX_WORKERS; i++)
		if (workers[i].pid > 0 && !workers[i].retiring)
			idx[n++] = i;
	return n ? &workers[idx[x % n]] : NULL;
}

static void spawn_worker_in(uint64_t x)
{
	int s = live_slot_from(x);
	struct worker_arg a;

	for (int i = 0; i < MAX_WORKERS && s >= 0; i++) {
		struct wproc *p = &workers[i];
		uint64_t z;

		if (p->pid > 0)
			continue;
		a.serial = next_serial++;
		z = seed ^ ((uint64_t)a.serial << 32);
		a.seed = splitmix64(&z);
		ops->before_spawn(slots[s].path);
		p->pid = spawn_in(slots[s].path, worker_main, &a);
		if (p->pid < 0) {
			chaos_error("fork: %s", strerror(errno));
			p->pid = 0;
			return;
		}
		p->serial = a.serial;
		p->slot = s;
		p->doomed = p->retiring = false;
		st.workers_spawned++;
		return;
	}
}

static const char *limit_target(uint64_t x)
{
	/* Mostly the slots; the two parents a fifth of the time. */
	if (x % 10 == 0)
		return top_cg;
	if (x % 10 == 1 || live_slot_from(0) < 0)
		return nest_cg;
	return slots[live_slot_from(x / 10)].path;
}

/*
 * One step.  Every step draws the same four values whatever the state, so
 * the seed fixes the sequence of decisions; whether a decision applies (a
 * worker to move may have just exited) depends on timing.
 */
static const char *const cop_name[NR_COPS] = {
	"spawn", "retire", "kill", "move", "create", "destroy", "limit", "scale",
	"numa_balancing", "thp", "mglru", "compact", "orphans", "nap",
};

static void chaos_step_one(int op);

/* One step, timed: a step that blocks the loop for long is worth a note. */
static void chaos_step(void)
{
	int op = pick(&prng, cop_weight, NR_COPS);
	double t0 = now_s();

	last_step[0] = 0;
	chaos_step_one(op);
	if (now_s() - t0 > SLOW_STEP_S) {
		st.slow_steps++;
		tt_diag("chaos: step %s took %.1f s (%s)", cop_name[op], now_s() - t0, last_step);
	}
}

static void chaos_step_one(int op)
{
	uint64_t a = rnd(&prng), b = rnd(&prng), c = rnd(&prng);
	struct rng sub = { .s = c };
	struct wproc *p;
	char val[32], why[512];
	int s, err;

	switch (op) {
	case C_SPAWN:
		if (nworkers() < MAX_WORKERS)
			spawn_worker_in(a);
		break;
	case C_RETIRE:
		p = worker_from(a);
		if (p && nworkers() > MIN_WORKERS) {
			p->retiring = true;
			kill(p->pid, SIGTERM);
		}
		break;
	case C_KILL:
		p = worker_from(a);
		if (p) {
			p->doomed = true;
			kill(p->pid, SIGKILL);
		}
		break;
	case C_MOVE:
		p = worker_from(a);
		s = live_slot_from(b);
		if (!p || s < 0 || s == p->slot)
			break;
		snprintf(last_step, sizeof(last_step), "worker %d to %s", p->serial,
			 strrchr(slots[s].path, '/') + 1);
		ops->before_attach(slots[s].path, &sub);
		err = cg_attach(slots[s].path, p->pid);
		if (!err) {
			p->slot = s;
			st.moves++;
		} else if (err != -ESRCH) {
			chaos_error("moving worker %d to %s: %s", p->serial, slots[s].path,
				    strerror(-err));
		}
		break;
	case C_CREATE:
		for (int i = 0; i < NSLOTS; i++) {
			s = (int)((a + i) % NSLOTS);
			if (!slots[s].path) {
				slot_create(s);
				break;
			}
		}
		break;
	case C_DESTROY:
		if (nlive_slots() > 2) {
			s = live_slot_from(a);
			snprintf(last_step, sizeof(last_step), "%s", strrchr(slots[s].path, '/') + 1);
			slot_destroy(s);
		}
		break;
	case C_LIMIT:
		err = ops->rewrite(limit_target(a), &sub, why, sizeof(why));
		snprintf(last_step, sizeof(last_step), "%.200s", why);
		if (err)
			chaos_error("%s", why);
		else
			st.limit_writes++;
		break;
	case C_SCALE: {
		static const int common[] = { 1, 10, 100, 500, 1000, 2000, 5000, 9999, 10000 };

		snprintf(val, sizeof(val), "%d", b & 1 ? common[a % ARRAY_SIZE(common)] :
							 (int)(1 + a % 10000));
		set_or_complain(SCALE_FACTOR, val);
		st.scale_writes++;
		break;
	}
	case C_BALANCING:
		set_or_complain(NUMA_BALANCING, a & 1 ? "2" : "0");
		st.balancing_toggles++;
		break;
	case C_THP: {
		static const char *const shmem_modes[] = { "advise", "always", "within_size",
							    "never" };

		set_or_complain(THP_ENABLED, a & 1 ? "always" : "madvise");
		set_or_complain(THP_SHMEM, shmem_modes[b % ARRAY_SIZE(shmem_modes)]);
		st.thp_toggles++;
		break;
	}
	case C_MGLRU:
		if (saved_lru_gen >= 0) {
			set_or_complain(LRU_GEN, a & 1 ? "y" : "n");
			st.mglru_toggles++;
		}
		break;
	case C_COMPACT: {
		char path[96];

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/compact",
			 mem_nodes[a % nmem_nodes]);
		snprintf(last_step, sizeof(last_step), "%s", path);
		set_or_complain(path, "1");
		st.compactions++;
		break;
	}
	case C_ORPHANS:
		st.orphan_unlinks += unlink_orphans(FILES_DIR) + unlink_orphans(RAMFS_DIR);
		break;
	default:
		usleep(a % 500 * 1000);	/* a quiet moment */
	}
}

/* What the tier limits' enforcement did in tt_stress (diagnostics only). */
static void report_enforcement(void)
{
	static const char *const keys[] = {
		"pgdemote_tierlimit", "pgpromote_tierlimit_denied",
	};
	char line[512], path[512], ev[256];
	size_t off = 0;

	line[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		long long v = cg_read_key(top_cg, "memory.stat", keys[i]);

		if (v != LLONG_MIN)
			off += snprintf(line + off, sizeof(line) - off, " %s %lld", keys[i], v);
	}
	snprintf(path, sizeof(path), "%s/memory.tiers.events", top_cg);
	if (read_text(path, ev, sizeof(ev)) > 0) {
		for (char *p = ev; *p; p++)
			if (*p == '\n')
				*p = ',';
		off += snprintf(line + off, sizeof(line) - off, "; tiers.events %s", ev);
	}
	if (off)
		tt_diag("tt_stress:%s", line);
}

/* ---- cases ------------------------------------------------------------------ */
static enum tt_result run_body(void)
{
	const char *root = ops->root();
	struct rng qrng;
	double end, next_q;
	char buf[64];

	TT_EXPECT(root, "no %s memory cgroup hierarchy", ops->name);
	TT_EXPECT(read_nodes(), "cannot read the node masks (is_toptier, has_memory)");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		sh = NULL;
	TT_EXPECT(sh, "mmap: %s", strerror(errno));
	memset(sh, 0, sizeof(*sh));
	signal(SIGPIPE, SIG_IGN);

	save_setting(SCALE_FACTOR, saved_scale, sizeof(saved_scale));
	save_setting(NUMA_BALANCING, saved_balancing, sizeof(saved_balancing));
	save_setting(THP_ENABLED, saved_thp, sizeof(saved_thp));
	bracketed(saved_thp);
	save_setting(THP_SHMEM, saved_thp_shmem, sizeof(saved_thp_shmem));
	bracketed(saved_thp_shmem);
	save_setting(DEMOTION, saved_demotion, sizeof(saved_demotion));
	if (read_text(LRU_GEN, buf, sizeof(buf)) > 0)
		saved_lru_gen = strtol(buf, NULL, 0) & 1;
	TT_EXPECT(saved_scale[0] && saved_balancing[0] && saved_thp[0] && saved_thp_shmem[0] &&
		  saved_demotion[0], "cannot read %s, %s, %s, %s or %s", SCALE_FACTOR,
		  NUMA_BALANCING, THP_ENABLED, THP_SHMEM, DEMOTION);
	TT_EXPECT(write_text(DEMOTION, "1") == 0, "cannot enable demotion");
	TT_EXPECT(write_text(THP_ENABLED, "always") == 0, "cannot enable THP");
	TT_EXPECT(write_text(THP_SHMEM, "advise") == 0, "cannot enable shmem THP");
	TT_EXPECT(write_text(NUMA_BALANCING, "2") == 0, "cannot set numa_balancing=2");

	mkdir(FILES_DIR, 0755);
	mkdir(RAMFS_DIR, 0755);
	TT_EXPECT(mount("ramfs", RAMFS_DIR, "ramfs", 0, NULL) == 0, "mount ramfs: %s",
		  strerror(errno));
	ramfs_mounted = true;

	take_counters(&before);
	top_cg = cg_create(root, "tt_stress");
	TT_EXPECT(top_cg && ops->enable_children(top_cg) == 0, "cannot create %s/tt_stress",
		  root);
	nest_cg = cg_create(top_cg, "nest");
	TT_EXPECT(nest_cg && ops->enable_children(nest_cg) == 0, "cannot create tt_stress/nest");

	qrng.s = seed ^ 0x5157455343454e54ULL;	/* the quiescent schedule's own stream */
	prng.s = seed;
	run_start = now_s();
	end = run_start + stress_seconds;
	next_q = run_start + 10 + rnd_below(&qrng, 11);
	tt_diag("running for %ld s: up to %d workers of %lu MB in up to %d cgroups", stress_seconds,
		MAX_WORKERS, WORKER_BUDGET / MB, NSLOTS);
	while (now_s() < end) {
		reap_workers(false);
		for (int i = 0; nlive_slots() < 2 && i < NSLOTS; i++)
			if (!slots[i].path)
				slot_create(i);
		while (nworkers() < MIN_WORKERS && st.chaos_errors < 10) {
			int before_n = nworkers();

			spawn_worker_in(rnd(&qrng));
			if (nworkers() == before_n)
				break;
		}
		chaos_step();
		usleep((20 + rnd_below(&prng, 180)) * 1000);	/* between steps */
		if (now_s() >= next_q) {
			quiescent_point();
			next_q = now_s() + 10 + rnd_below(&qrng, 11);
		}
	}
	reap_workers(false);
	quiescent_point();	/* the last one, at the end of the run */
	st.ran = true;

	tt_diag("%ld ops, %ld migrations (%ld pages moved, %ld move_pages errors), "
		"%ld pages verified, %ld pressure runs, %ld collapses, %ld files, "
		"%ld THP / %ld shmem / %ld mlocked regions, %ld ENOMEM/ENOSPC",
		sh->ops, sh->migrations, sh->migrated_pages, sh->move_errors, sh->verified_pages,
		sh->pressure_runs, sh->collapses, sh->files_written, sh->thp_regions,
		sh->shmem_regions, sh->mlocked_regions, sh->enomem);
	tt_diag("%d workers (%d retired cleanly so far, %d killed), %d cgroups created, %d "
		"destroyed, %d moves, %d limit writes, %d scale factors, %d numa_balancing, "
		"%d THP, %d MGLRU toggles, %d compactions, %d orphan files unlinked, "
		"%d slow steps",
		st.workers_spawned, st.workers_ok, st.workers_killed, st.cg_created,
		st.cg_destroyed, st.moves, st.limit_writes, st.scale_writes,
		st.balancing_toggles, st.thp_toggles, st.mglru_toggles, st.compactions,
		st.orphan_unlinks, st.slow_steps);
	tt_diag("pgdemote_kswapd %lld, pgdemote_direct %lld, pgpromote_success %lld, "
		"pgmigrate_success %lld, thp_split_page %lld, oom_kill %lld",
		vmstat("pgdemote_kswapd"), vmstat("pgdemote_direct"), vmstat("pgpromote_success"),
		vmstat("pgmigrate_success"), vmstat("thp_split_page"), vmstat("oom_kill"));

	report_enforcement();

	TT_EXPECT(st.chaos_errors == 0, "%d operations of the chaos loop failed", st.chaos_errors);
	TT_EXPECT(st.workers_spawned >= MIN_WORKERS, "only %d workers ran", st.workers_spawned);
	TT_EXPECT(sh->ops > 0 && sh->verified_pages > 0, "the workers did nothing");
	TT_EXPECT(sh->migrated_pages > 0, "move_pages(2) never moved a page");
	TT_EXPECT(st.limit_writes > 0, "no limit was written");
	return TT_PASS;
}

static enum tt_result test_run(void)
{
	return run_body();
}

static enum tt_result test_quiescent(void)
{
	TT_EXPECT(st.ran, "the stress run did not complete");
	TT_EXPECT(st.quiescent_points >= 1, "no quiescent point was reached");
	TT_EXPECT(st.quiescent_failures == 0, "%d of %d quiescent points found a mismatch "
		  "(tolerance %lld kB, see above)", st.quiescent_failures, st.quiescent_points,
		  TOL / 1024);
	tt_diag("%d quiescent points, all consistent; largest difference accepted %lld kB",
		st.quiescent_points, st.worst_diff / 1024);
	return TT_PASS;
}

/* Wait for a cgroup v2 parent to have no dying descendants (if v2). */
static int dying_descendants(const char *cg, double deadline)
{
	char path[512];
	long long n;

	snprintf(path, sizeof(path), "%s/cgroup.stat", cg);
	if (!path_exists(path))
		return 0;
	do {
		n = file_key(path, "nr_dying_descendants");
		if (n == 0)
			return 0;
		usleep(200 * 1000);	/* poll interval */
	} while (now_s() < deadline);
	return (int)n;
}

static bool teardown_failed;

static void teardown_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void teardown_note(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	teardown_failed = true;
	tt_diag("teardown: %s", line);
}

static void teardown(void)
{
	double deadline = now_s() + 2 * SETTLE_S;
	char why[512] = "";
	bool empty = false;
	int dying;

	/* Workers retire: final check of their data, files removed. */
	for (int i = 0; i < MAX_WORKERS; i++)
		if (workers[i].pid > 0) {
			kill(workers[i].pid, SIGTERM);
			kill(workers[i].pid, SIGCONT);
		}
	while (nworkers() && now_s() < deadline) {
		reap_workers(false);
		usleep(50 * 1000);	/* poll interval */
	}
	for (int i = 0; i < MAX_WORKERS; i++)
		if (workers[i].pid > 0) {
			teardown_note("worker %d did not retire within %d s", workers[i].serial,
				      2 * SETTLE_S);
			kill(workers[i].pid, SIGKILL);
		}
	reap_workers(true);
	if (sh)
		st.orphan_unlinks += unlink_orphans(FILES_DIR) + unlink_orphans(RAMFS_DIR);
	if (ramfs_mounted && umount(RAMFS_DIR))
		teardown_note("umount %s: %s", RAMFS_DIR, strerror(errno));
	ramfs_mounted = false;
	rmdir(RAMFS_DIR);
	if (path_exists(FILES_DIR) && rmdir(FILES_DIR))
		teardown_note("rmdir %s: %s (files left)", FILES_DIR, strerror(errno));

	for (int i = 0; i < NSLOTS; i++)
		if (slots[i].path && !slot_destroy(i))
			teardown_note("slot %d not removed", i);
	if (nest_cg && (cg_destroy(nest_cg) || path_exists(nest_cg)))
		teardown_note("%s not removed", nest_cg);
	if (top_cg) {
		/* Removed children leave no top-tier usage in their parent. */
		deadline = now_s() + SETTLE_S;
		do {
			empty = ops->parent_empty(top_cg, why, sizeof(why));
			if (!empty)
				usleep(200 * 1000);	/* poll interval */
		} while (!empty && now_s() < deadline);
		if (!empty)
			teardown_note("after %d s tt_stress still holds memory: %s", SETTLE_S, why);
		else
			tt_diag("teardown: tt_stress is empty: %s", why);
		dying = dying_descendants(top_cg, now_s() + SETTLE_S);
		if (dying)
			teardown_note("tt_stress still has %d dying descendants after %d s", dying,
				      SETTLE_S);
		if (cg_destroy(top_cg) || path_exists(top_cg))
			teardown_note("%s not removed", top_cg);
	}
	restore_settings();
}

static enum tt_result test_teardown(void)
{
	teardown();
	TT_EXPECT(top_cg, "nothing was set up");
	TT_EXPECT(!teardown_failed, "teardown left something behind (see above)");
	return TT_PASS;
}

static enum tt_result test_data(void)
{
	TT_EXPECT(sh && st.ran, "the stress run did not complete");
	TT_EXPECT(sh->bad_pages == 0 && st.workers_corrupt == 0,
		  "%ld corrupted pages in %d workers", sh->bad_pages, st.workers_corrupt);
	TT_EXPECT(st.workers_bad == 0, "%d workers died unexpectedly (see above)", st.workers_bad);
	TT_EXPECT(st.workers_ok > 0, "no worker retired with a final check");
	TT_EXPECT(sh->verified_pages > 0 && sh->migrated_pages > 0,
		  "%ld pages verified, %ld migrated", sh->verified_pages, sh->migrated_pages);
	tt_diag("%ld pages verified intact, %ld pages migrated by move_pages, %d workers "
		"retired with a final check", sh->verified_pages, sh->migrated_pages, st.workers_ok);
	return TT_PASS;
}

/*
 * Global counters come back.  Free memory is MemFree plus the per-CPU free
 * lists (pcp_free()); kernel memory may grow for good (slab caches, per-CPU
 * chunks and page tables of the cgroups and tasks that came and went) and
 * is subtracted.  FREE_TOL covers what remains: kernel allocations that
 * meminfo does not itemise (vmalloc'd and per-CPU areas of dead cgroups
 * being freed by RCU, kernfs nodes).
 */
#define FREE_TOL	(8LL * (long long)MB)

static bool counters_back(const struct counters *now, bool report)
{
	long long kgrow = now->kernel - before.kernel;
	bool ok = true;

	for (size_t i = 0; i < ARRAY_SIZE(vm_keys); i++) {
		if (now->vm[i] == LLONG_MIN || before.vm[i] == LLONG_MIN) {
			if (report)
				tt_diag("/proc/vmstat has no %s", vm_keys[i]);
			ok = false;
		} else if (llabs(now->vm[i] - before.vm[i]) > vm_tol[i]) {
			if (report)
				tt_diag("%s: %lld before, %lld after (tolerance %lld)", vm_keys[i],
					before.vm[i], now->vm[i], vm_tol[i]);
			ok = false;
		}
	}
	if (now->memfree + kgrow < before.memfree - FREE_TOL) {
		if (report)
			tt_diag("MemFree %lld kB before, %lld kB after, kernel memory grew by %lld kB",
				before.memfree / 1024, now->memfree / 1024, kgrow / 1024);
		ok = false;
	}
	if (now->toptier_free + kgrow < before.toptier_free - FREE_TOL) {
		if (report)
			tt_diag("TopTierFree %lld kB before, %lld kB after, kernel grew by %lld kB",
				before.toptier_free / 1024, now->toptier_free / 1024, kgrow / 1024);
		ok = false;
	}
	if (now->oom_kill != before.oom_kill) {
		if (report)
			tt_diag("oom_kill %lld before, %lld after", before.oom_kill, now->oom_kill);
		ok = false;
	}
	if (now->cgroups != before.cgroups) {
		if (report)
			tt_diag("/proc/cgroups: %d memory cgroups before, %d after", before.cgroups,
				now->cgroups);
		ok = false;
	}
	return ok;
}

static enum tt_result test_counters(void)
{
	double deadline = now_s() + SETTLE_S;
	struct counters now;
	bool ok;

	TT_EXPECT(top_cg, "nothing was set up");
	do {
		take_counters(&now);
		ok = counters_back(&now, false);
		if (!ok)
			usleep(500 * 1000);	/* poll interval */
	} while (!ok && now_s() < deadline);
	TT_EXPECT(counters_back(&now, true), "global counters did not come back in %d s",
		  SETTLE_S);
	tt_diag("MemFree+pcp %lld -> %lld kB, TopTierFree+pcp %lld -> %lld kB, kernel memory %+lld kB, "
		"(per-CPU lists %lld -> %lld kB), nr_anon_pages %lld -> %lld, nr_shmem %lld -> %lld, "
		"memory cgroups %d -> %d", before.memfree / 1024, now.memfree / 1024, before.toptier_free / 1024,
		now.toptier_free / 1024, (now.kernel - before.kernel) / 1024, before.pcp / 1024,
		now.pcp / 1024, before.vm[0],
		now.vm[0], before.vm[2], now.vm[2], before.cgroups, now.cgroups);
	return TT_PASS;
}

/*
 * What the runner greps the console for, plus what only prints a line:
 * vmstat_refresh complains of counters gone negative with pr_warn.
 */
static enum tt_result test_kmsg(void)
{
	static const char *const bad[] = {
		"vmstat_refresh", "underflow", "WARNING:", "BUG:", "Oops", "KASAN",
		"Bad page", "refcount_t", "circular locking", "Out of memory",
		"Memory cgroup out of memory",
	};
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf, *line, *save;
	int n, found = 0;

	TT_EXPECT(size > 0, "klogctl: %s", strerror(errno));
	buf = malloc(size + 1);
	TT_EXPECT(buf, "malloc");
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	TT_EXPECT(n >= 0, "klogctl read: %s", strerror(errno));
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
			if (strstr(line, bad[i])) {
				if (found++ < 10)
					tt_diag("kernel: %s", line);
				break;
			}
	free(buf);
	TT_EXPECT(!found, "%d kernel log lines complain (see above)", found);
	return TT_PASS;
}

int stress_main(const struct stress_ops *o)
{
	static const struct tt_case cases[] = {
		{ "run_stress", test_run },
		{ "counters_match_at_quiescent_points", test_quiescent },
		{ "teardown_leaves_nothing", test_teardown },
		{ "data_intact", test_data },
		{ "global_counters_restored", test_counters },
		{ "no_kernel_complaints", test_kmsg },
	};
	bool have_seed;
	sigset_t term;

	ops = o;
	/* Workers unblock it once their handler is in place. */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	stress_seconds = cmdline_ll("toptier.stress_seconds=", 30, NULL);
	if (stress_seconds < 1)
		stress_seconds = 1;
	seed = cmdline_seed(&have_seed);
	if (!have_seed) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_REALTIME, &ts);
		x = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^
		    ((uint64_t)getpid() << 40);
		seed = splitmix64(&x) >> 1;	/* positive, so it reads back with strtoll */
	}
	printf("# seed %llu: rerun with make stress SEED=%llu\n", (unsigned long long)seed,
	       (unsigned long long)seed);
	tt_diag("cgroup %s, stress_seconds %ld", ops->name, stress_seconds);
	return tt_run(cases, ARRAY_SIZE(cases));
}

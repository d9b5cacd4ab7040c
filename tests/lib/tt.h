/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the toptier guest tests: TAP output, sysfs/procfs
 * files, /proc/vmstat deltas, /proc/zoneinfo, NUMA placement, cgroups (v1
 * and v2) and holder processes keeping memory in a cgroup.
 */
#ifndef TT_H
#define TT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MB (1024UL * 1024UL)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- TAP ---------------------------------------------------------------- */
enum tt_result { TT_PASS, TT_FAIL, TT_SKIP };

struct tt_case {
	const char *name;
	enum tt_result (*fn)(void);
	/*
	 * A known bug, tracked in an open issue: the case still runs and
	 * reports, as TAP "# TODO", which the runner lists but does not count
	 * as a failure.  Remove the mark when the bug is fixed.
	 */
	const char *todo;
};

/* Run a table of cases, print TAP, return the process exit status. */
int tt_run(const struct tt_case *cases, size_t n);
/* Define a case function fn that runs call, then cleanup(), and returns
 * call's result. */
#define TT_WITH_CLEANUP(fn, call, cleanup)	\
	static enum tt_result fn(void)		\
	{					\
		enum tt_result r_ = call;	\
						\
		cleanup();			\
		return r_;			\
	}
void tt_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Record why a case is skipped; printed on its "ok ... # SKIP" line. */
void tt_skip_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print a diagnostic and fail the current case when cond is false. */
#define TT_EXPECT(cond, ...) do {					\
	if (!(cond)) {							\
		tt_diag("%s:%d: expected %s", __FILE__, __LINE__, #cond); \
		tt_diag(__VA_ARGS__);					\
		return TT_FAIL;						\
	}								\
} while (0)

/* ---- files -------------------------------------------------------------- */
int read_text(const char *path, char *buf, size_t len);
int write_text(const char *path, const char *val);	/* 0 or -errno */
/* One open(2) and one write(2) of val: the bytes the kernel took (fewer
 * than strlen(val) for a short write), or -errno of the open or the write. */
int write_once(const char *path, const char *val);
/* The number at the start of an open file (pread at 0): memory.peak-style
 * files keep per-fd state, so tests read them through one fd. */
long long fd_read_ll(int fd);
long long read_ll(const char *path);			/* LLONG_MIN on error */
int write_ll(const char *path, long long v);
bool path_exists(const char *path);
/*
 * The kernel of config/debug.config (KASAN, lockdep, kmemleak): kmemleak
 * is in that config only, and the guest mounts debugfs.  Costs there are
 * many times the normal kernel's, so bounds on CPU time are asserted on
 * the normal kernel.
 */
bool tt_debug_kernel(void);
/* Find "key <number>" (or "key: number") in a file of such lines. */
long long file_key(const char *path, const char *key);

/* ---- /proc/vmstat --------------------------------------------------------- */
long long vmstat(const char *key);
/* Sum of every /proc/vmstat counter whose name starts with prefix. */
long long vmstat_prefix(const char *prefix);

/* ---- time ----------------------------------------------------------------- */
double now_s(void);

/* ---- memory ---------------------------------------------------------------- */
extern long page_size;
void *map_anon(size_t len);
/* Write a pattern derived from seed into every page (first touch). */
void fill_pages(void *buf, size_t len, uint64_t seed);
/* Check the pattern; returns the number of bad pages. */
size_t check_pages(const void *buf, size_t len, uint64_t seed);
/* Read one word of every page, to keep the pages hot. */
uint64_t touch_pages(const void *buf, size_t len);

/* ---- NUMA ------------------------------------------------------------------ */
#define TT_MAX_NODES 8
int tt_set_mempolicy(int mode, const unsigned long *mask, unsigned long maxnode);
int tt_mbind(void *addr, size_t len, int mode, const unsigned long *mask,
	     unsigned long maxnode, unsigned int flags);
/* Bind the calling task's future allocations to one node (MPOL_BIND). */
int bind_to_node(int node);
/* Prefer one node for future allocations, falling back to others (MPOL_PREFERRED). */
int prefer_node(int node);
int unbind(void);
/* Bind a range to a node with mbind; existing pages are moved there. */
int place_on_node(void *buf, size_t len, int node);
/* Back to MPOL_DEFAULT for a range (pages stay where they are). */
int reset_policy(void *buf, size_t len);
/* Count the pages of a range per node with move_pages(2) status queries. */
int pages_per_node(const void *buf, size_t len, long counts[TT_MAX_NODES]);
/* Move all pages of a range to a node with move_pages(2). */
int move_range(void *buf, size_t len, int node);
/* Free / total memory of a node in bytes from its meminfo. */
long long node_free(int node);
long long node_total(int node);
/* A node's page cache on the LRU lists (Active(file) + Inactive(file)), bytes. */
long long node_file(int node);
/* Number of nodes listed in a /sys/devices/system/node/ mask file. */
int nodelist_parse(const char *list, bool nodes[TT_MAX_NODES]);

/* One zone of /proc/zoneinfo; fields the kernel does not print are -1. */
struct tt_zone {
	int node;
	char name[16];
	long long free, boost, min, low, high, promo, toptier, managed;	/* pages */
};
#define TT_MAX_ZONES 32
/* Parse /proc/zoneinfo into zones[]; returns the number of zones or -errno. */
int zoneinfo_read(struct tt_zone *zones, int max);

/* ---- cgroups -------------------------------------------------------------- */
/* Mount the v1 memory hierarchy (once) and return its root. */
const char *cg1_root(void);
/* Mount cgroup2 (once), enable memory in the root and return its root. */
const char *cg2_root(void);
/* Create root/name; returns a malloc()ed path or NULL. */
char *cg_create(const char *parent, const char *name);
/* Kill the members, then remove; waits (with a deadline) for it to go. */
int cg_destroy(const char *path);
/* Poll a cgroup's file (every 200 ms) until its number is at most want or
 * secs pass; calls show(step) every 10 s meanwhile (NULL: none).  Returns
 * the last value read. */
long long cg_wait_at_most(const char *cg, const char *file, long long want, double secs,
			  void (*show)(const char *step));
/* Poll a cgroup's file until its number stays the same for a second (the
 * background work it shows is done); returns that value. */
long long cg_wait_settled(const char *cg, const char *file);
/* cg_destroy(*cg), free it and set it to NULL; a NULL *cg is fine. */
void cg_destroy_free(char **cg);
int cg_write(const char *cg, const char *file, const char *val);
long long cg_read_ll(const char *cg, const char *file);
/* Value of a "key value" line in a cgroup file (memory.stat, ...). */
long long cg_read_key(const char *cg, const char *file, const char *key);
int cg_attach(const char *cg, pid_t pid);
/* Per-node value from memory.numa_stat (v1: "name=total N0=x ..."). */
long long cg1_numa_stat(const char *cg, const char *name, int node);
/* A cgroup v2 memory.numa_stat entry ("anon", "file", ...) on one node, in
 * bytes; LLONG_MIN when missing. */
long long cg2_numa_stat(const char *cg, const char *name, int node);

/* ---- memory tiers and the cgroup v2 memory.tiers.* files ------------------ */
/*
 * A tier is a kernel memory tier, /sys/devices/virtual/memory_tiering/
 * memory_tierN, keyed by that N; only tiers with a node with memory count,
 * fastest first (ascending key).  memory.tiers.{current,peak,low,high,max}
 * have one "N value" line per tier except the slowest, and every value is
 * cumulative: about tier N and every faster tier.
 */
#define TT_MAX_TIERS 8
/* What a "max" value reads as. */
#define TT_TIER_MAX INT64_MAX
struct tt_tier {
	int key;			/* the N of memory_tierN */
	bool nodes[TT_MAX_NODES];	/* its nodes with memory */
	int nnodes;
};
/* The tiers holding a node with memory, ascending key: their number, or
 * -errno. */
int tiers_read(struct tt_tier *tiers, int max);
/* The key of the tier of a node with memory, or -1. */
int tier_of_node(int node);
/* Which of a zone's watermarks node_free_wmark() sums. */
enum tt_wmark { TT_WMARK_MIN, TT_WMARK_LOW, TT_WMARK_HIGH, TT_WMARK_TOPTIER };
/* A node's free memory and one of its watermarks over its zones, in bytes. */
void node_free_wmark(int node, enum tt_wmark which, long long *free, long long *wmark);
/* A node's free memory and toptier watermark over its zones, in bytes. */
static inline void node_free_toptier_wmark(int node, long long *free, long long *wmark)
{
	node_free_wmark(node, TT_WMARK_TOPTIER, free, wmark);
}
/* Wait up to secs for want tiers holding memory; true if there are. */
bool tiers_wait(int want, double secs);
/*
 * Set every memory block of a node to state ("online_movable", "offline"),
 * leaving those already there; *nblocks is the node's block count.  0, or
 * -errno of the first block that would not change (retried while busy).
 */
int node_blocks_set(int node, const char *state, int *nblocks);
/* The same for at most max blocks not in that state yet. */
int node_blocks_set_some(int node, const char *state, int max, int *nblocks);
/*
 * The pmem topology's NVDIMM (scripts/vm.sh) as system RAM: its namespace
 * becomes a device-dax, which dax/kmem adds to the page allocator as
 * offline memory blocks of the dax region's node.  Returns that node, or
 * -errno; does what is not done yet.  pmem_from_kmem() gives the device
 * back: kmem removes its memory, which must be offline by then (else the
 * kernel keeps it until reboot), and the node leaves N_MEMORY.
 */
int pmem_to_kmem(void);
int pmem_from_kmem(void);
/*
 * pmem_join(): the PMEM in as node1, online (movable) and a tier below
 * node0's; NULL, or what went wrong.  pmem_leave(): node1's blocks offline
 * and the device back from kmem, for clean-ups.
 */
const char *pmem_join(void);
void pmem_leave(void);
/*
 * What a case creates and its clean-up must undo: tt_cgroup() creates a
 * cgroup and tt_holder() starts a holder (holder_start()), both
 * remembered; tt_holder_release() stops one holder early; tt_release_all()
 * stops every remembered holder and removes every remembered cgroup,
 * newest first (children before parents).  Up to 16 of each per case.
 */
char *tt_cgroup(const char *parent, const char *name);
struct holder *tt_holder(const char *cg, size_t len, uint64_t seed, bool thp);
void tt_holder_release(struct holder *h);
void tt_release_all(void);
/*
 * Load for spawn_in(): map CHURN_LEN bytes, fill, check and unmap them,
 * over and over; exits 11 if a page lost its contents.
 */
#define CHURN_LEN	(16 * MB)
int churn_anon(void *arg);
/*
 * Ask the host for mb more memory on node, a pc-dimm plugged in through
 * the QEMU monitor (scripts/vm.sh -H; header host_requests=yes), and wait
 * up to 30 s for its memory blocks to appear (offline, the config's
 * default).  0, -EOPNOTSUPP without -H, or -ETIMEDOUT.
 */
int host_add_dimm(int node, int mb);
/* How many of a node's memory blocks are online. */
int node_online_blocks(int node);
/*
 * Parse "N value" lines (value digits or "max", read as TT_TIER_MAX) into
 * keys[] and vals[]: the number of lines, -EINVAL for a line of any other
 * form, -ENOSPC beyond max.  keyed_read() does it on a file (-errno when
 * it cannot be read).
 */
int keyed_parse(const char *buf, int *keys, long long *vals, int max);
int keyed_read(const char *path, int *keys, long long *vals, int max);
/* One tier's value in a cgroup's keyed file: TT_TIER_MAX for "max",
 * LLONG_MIN when there is no such line or the file does not parse. */
long long cg_tier_read(const char *cg, const char *file, int key);
/* The same through an open descriptor (a per-fd peak), read from offset 0. */
long long fd_tier_read(int fd, int key);
/* Write the one line "key val\n" to a cgroup's file: 0 or -errno. */
int cg_tier_write(const char *cg, const char *file, int key, const char *val);
/* A field ("low", "high", "max", "fallback") of one tier's line of
 * memory.tiers.events ("N low=1 high=2 max=3 fallback=4"); LLONG_MIN when
 * missing. */
long long cg_tier_event(const char *cg, int key, const char *name);
/* A line of memory.tiers.current within tol of what memory.numa_stat sums up
 * to key and of want bytes; logs both with step. */
bool cg_tier_current_matches(const char *cg, int key, long long want, long long tol,
			     const char *step);
/*
 * memory.numa_stat entries names[] summed over the nodes set in nodes[],
 * from one read of the file (so from one flush).  Lines are "name N0=x"
 * (v2, bytes) or "name=total N0=x" (v1, pages); names are matched up to
 * the first ' ' or '='.  LLONG_MIN when unreadable or a name is missing.
 */
long long cg_numa_stat_sum(const char *cg, const bool nodes[TT_MAX_NODES],
			   const char *const *names, int nnames);
/* memory.numa_stat "anon" + "file", from one read, summed over the nodes of
 * the tiers with a key <= key: what memory.tiers.current's line key
 * counts; LLONG_MIN when unreadable. */
long long cg2_numa_upto_tier(const char *cg, int key);
/* Poll up to secs for memory.tiers.current's line key to be at most
 * want; returns the last value read. */
long long cg_tier_line_at_most(const char *cg, int key, long long want, double secs);
/*
 * Does memory.tiers.current's line key agree with memory.numa_stat within
 * tol?  Polled for up to secs: numa_stat is flushed lazily and background
 * demotion moves pages between the two reads; a wrong counter never
 * agrees.  pause (if > 0) is stopped during each comparison.
 */
bool cg_tier_line_agrees(const char *cg, int key, long long tol, pid_t pause, double secs,
			 const char *step);
/* The same for other memory.numa_stat entries (the LRU lists, ...). */
long long cg2_numa_entries_upto_tier(const char *cg, int key, const char *const *names,
				     int nnames);

/* ---- processes ------------------------------------------------------------ */
/* Fork; the child joins cg (if not NULL) and runs fn(arg); returns pid, once
 * the child is in cg (or is exiting with 126, unable to join it). */
pid_t spawn_in(const char *cg, int (*fn)(void *), void *arg);
/* The pid of a node's kswapd thread (kswapdN), or -1. */
pid_t kswapd_pid(int node);
/* Wait for a child; returns its exit status, or 128+signal. */
int wait_child(pid_t pid);
/* Reap *pid, killing it first when kill_it; then *pid = -1.  A *pid <= 0
 * is fine. */
void child_stop(pid_t *pid, bool kill_it);
/*
 * Fill a node: a child joins cg (if not NULL), binds itself to node and
 * writes anonymous memory a megabyte at a time until the node's free
 * memory is at most its which watermark minus below (a negative below
 * stops that much above it), then holds the memory until child_stop().
 * Sized from the free count as it goes, not in advance: the per-CPU page
 * lists hold pages that the count does not show, and a filler sized from
 * it stops short or, on a full node, gets killed.  Returns the child's
 * pid once the node is there, or -1 (the child died, or it did not get
 * there within timeout_s seconds).
 */
pid_t node_filler_start(const char *cg, int node, enum tt_wmark which, long long below,
			int timeout_s);
/* Run fn(arg) in a child that dropped to uid and gid 65534 (nobody), with no
 * supplementary groups and so no capabilities; returns what fn returned, or
 * INT_MIN when the child could not drop its privileges or died. */
int as_nobody(int (*fn)(void *), void *arg);
/* Write len bytes (whole MBs) to path from a short-lived task in cg: the page
 * cache stays charged to cg.  0, or the child's failure code. */
int write_file_from(const char *cg, const char *path, size_t len);

/* Turn demotion (/sys/kernel/mm/numa/demotion_enabled) on or off; 0 on
 * success.  tt_restore_demotion() puts back what was there before the first
 * call. */
int tt_set_demotion(bool on);
void tt_restore_demotion(void);
/* Allocate, write and free 2 MB bound to node: wakes its kswapd when the
 * node is short of memory. */
void touch_node(int node);

/* Turn MGLRU (lru_gen) on or off; 0 on success.  tt_restore_mglru() puts
 * back what was there before the first call. */
int tt_set_mglru(bool on);
void tt_restore_mglru(void);

/*
 * A holder: a child process that joins cg (if not NULL), maps len bytes of
 * anonymous memory (2 MB aligned and MADV_HUGEPAGE when thp), writes every
 * page with fill_pages(seed) and holds the memory until holder_stop().  In
 * between it serves the parent's requests over two pipes (the guest kernel
 * has no sockets), so the parent can ask where the memory is, move it and
 * check it.
 */
struct holder_shm;
struct holder {
	pid_t pid;
	int req, resp;		/* the parent's ends: requests out, answers in */
	int child_req, child_resp;	/* the child's ends */
	size_t len;
	struct holder_shm *shm;
};
/* Returns once the memory is written, or NULL (the child died, ...). */
struct holder *holder_start(const char *cg, size_t len, uint64_t seed, bool thp);
/* Pages of the held memory per node (move_pages(2) status). */
int holder_count(struct holder *h, long counts[TT_MAX_NODES]);
/* Move the held memory to a node with move_pages(2). */
int holder_move(struct holder *h, int node);
/* Pages of the held memory whose contents changed, or -1. */
long holder_check(struct holder *h);
/* In every chunk of the memory, drop what follows its first keep bytes. */
int holder_trim(struct holder *h, size_t chunk, size_t keep);
/* Kill the child and wait for it; NULL is fine. */
void holder_stop(struct holder *h);

/* Topology name passed on the kernel command line (toptier.topology=). */
const char *topology(void);

#endif

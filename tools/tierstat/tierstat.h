/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tierstat: the model (tiers, nodes, cgroups of one snapshot), the names it
 * reads, and what each part of the program offers the others.
 */
#ifndef TIERSTAT_H
#define TIERSTAT_H

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
extern const char *const ctr_names[NCTR];

/*
 * cgroup v2 memory.tiers.* files: one "N value" line per memory tier but
 * the slowest, each value cumulative over tier N and every faster tier.
 */
enum { TF_CURRENT, TF_PEAK, TF_LOW, TF_HIGH, TF_MAX, NTF };
extern const char *const tf_names[NTF];
/* keys of memory.tiers.events lines ("N low=n high=n max=n fallback=n") */
#define NTEV 4
extern const char *const tev_names[NTEV];

/* /proc/vmstat keys shown: these prefixes */
extern const char *const vm_prefixes[4];

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
extern const char *const sort_names[6];

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

extern struct opts o;
extern int cg_version;		/* 1 or 2 */
extern char *cg_root;
extern uint64_t page_size;
extern int path_width;		/* the live view's CGROUP column, 0: no limit */

/* util.c */
int cmp_int(const void *a, const void *b);
void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
bool exists_in(const char *dir, const char *name);
bool is_dir(const char *path);
uint64_t kv_get(const char *buf, const char *key);
int parse_nodelist(const char *s, bool *set);
bool parse_u64(const char *s, const char **endp, uint64_t *v);
char *read_all(const char *path);
char *read_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t read_u64_file(const char *dir, const char *name, bool allow_max);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);

/* source.c */
void find_cgroup_root(void);
void read_cgroups(struct snap *sn);
void read_topology(struct snap *sn);
void read_vmstat(struct snap *sn);

/* model.c */
char *cg_path(const struct cg *c);
void release(struct snap *sn);
double secs(const struct timespec *a, const struct timespec *b);
void take(struct snap *sn, const struct snap *prev);
uint64_t used_of(uint64_t total, uint64_t free);

/* human.c */
void live_draw(const char *buf, size_t len);
void live_restore(void);
void live_start(void);
bool live_wait(double secs);
void print_human(FILE *out, const struct snap *sn, bool rates);

/* export.c */
void print_json(const struct snap *sn, double interval);
void print_prom(FILE *f, const struct snap *sn);
void write_atomically(const struct snap *sn);

#endif /* TIERSTAT_H */

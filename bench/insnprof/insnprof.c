// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof: a QEMU TCG plugin that counts the guest instructions executed
 * in each translation block of the kernel (addresses from the base of the
 * kernel text up).  At exit it writes one line per block address, every
 * translation of that address summed:
 *
 *   <address in hex> <instructions executed> <times the block started>
 *
 * to the file given as "out=" (default insnprof.txt).  bench/insnprof/
 * attribute.py turns two such files into instructions per page fault, per
 * kernel function.  The count is per block, as QEMU's own libinsn and
 * hotblocks plugins count: a block left early (an exception, an interrupt
 * in icount mode) is counted whole.
 *
 * Debian's QEMU 7.2 ships no qemu-plugin.h; these are the few declarations
 * of its plugin API, version 1, that this needs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb,
				    void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define KERNEL_BASE	0xffffffff80000000ULL
#define CHUNK		65536

struct block {
	uint64_t vaddr;
	uint64_t insns;		/* executions times instructions */
	uint64_t n;		/* instructions in the block */
};

struct chunk {
	struct chunk *next;
	size_t used;
	struct block blocks[CHUNK];
};

static struct chunk *chunks;
static const char *out_path = "insnprof.txt";

static struct block *new_block(void)
{
	if (!chunks || chunks->used == CHUNK) {
		struct chunk *c = calloc(1, sizeof(*c));

		if (!c)
			abort();
		c->next = chunks;
		chunks = c;
	}
	return &chunks->blocks[chunks->used++];
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	if (vaddr < KERNEL_BASE)
		return;
	b = new_block();
	b->vaddr = vaddr;
	b->n = qemu_plugin_tb_n_insns(tb);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->insns,
						 qemu_plugin_tb_n_insns(tb));
}

static int by_vaddr(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	size_t n = 0, i = 0, j;
	struct block *all;
	struct chunk *c;
	FILE *f;

	for (c = chunks; c; c = c->next)
		n += c->used;
	all = malloc((n + 1) * sizeof(*all));
	for (c = chunks; c; c = c->next)
		for (j = 0; j < c->used; j++)
			all[i++] = c->blocks[j];
	qsort(all, n, sizeof(*all), by_vaddr);
	f = fopen(out_path, "w");
	if (!f)
		return;
	for (i = 0; i < n; i = j) {
		uint64_t sum = 0, execs = 0;

		for (j = i; j < n && all[j].vaddr == all[i].vaddr; j++) {
			sum += all[j].insns;
			execs += all[j].insns / all[j].n;
		}
		if (sum)
			fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				all[i].vaddr, sum, execs);
	}
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}

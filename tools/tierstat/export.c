// SPDX-License-Identifier: GPL-2.0
/* tierstat: the JSON and Prometheus outputs. */
#define _GNU_SOURCE
#include "tierstat.h"

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

void print_json(const struct snap *sn, double interval)
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


void print_prom(FILE *f, const struct snap *sn)
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
void write_atomically(const struct snap *sn)
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

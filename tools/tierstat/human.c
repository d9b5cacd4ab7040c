// SPDX-License-Identifier: GPL-2.0
/* tierstat: the human output and the live view. */
#define _GNU_SOURCE
#include "tierstat.h"

/* ---- human output ---- */

/* The live view's limit on the CGROUP column (0: none); longer paths keep
 * their end. */
int path_width;

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

void print_human(FILE *out, const struct snap *sn, bool rates)
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


/* ---- the live view ---- */

static struct termios saved_tio;
static bool tio_saved, live_screen;

void live_restore(void)
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
void live_start(void)
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
void live_draw(const char *buf, size_t len)
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
bool live_wait(double secs)
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

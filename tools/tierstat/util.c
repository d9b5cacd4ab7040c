// SPDX-License-Identifier: GPL-2.0
/* tierstat: helpers: allocation, files, number and list parsing. */
#define _GNU_SOURCE
#include "tierstat.h"

void die(int status, const char *fmt, ...)
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

void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		die(EXIT_RUNTIME, "out of memory");
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die(EXIT_RUNTIME, "out of memory");
	return p;
}

char *xasprintf(const char *fmt, ...)
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
char *read_all(const char *path)
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

char *read_path(const char *fmt, ...)
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

bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists_in(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	bool r = access(p, F_OK) == 0;

	free(p);
	return r;
}

/* Unsigned decimal at s (no sign, no blanks); *endp is where it ends. */
bool parse_u64(const char *s, const char **endp, uint64_t *v)
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
uint64_t read_u64_file(const char *dir, const char *name, bool allow_max)
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
int parse_nodelist(const char *s, bool *set)
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
uint64_t kv_get(const char *buf, const char *key)
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

int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

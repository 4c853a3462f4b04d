/* SPDX-License-Identifier: MIT */
/* Loading a trace for a command, the numbers its text shows, its spool files. */
#include "cli.h"

#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

struct cgtrace_doc *cli_load(const char *path)
{
	return cli_load_flags(path, 0);
}

const char *cli_path_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

struct cgtrace_doc *cli_load_flags(const char *path, unsigned flags)
{
	struct cgtrace_doc *doc = NULL;
	char err[2048];
	if (cgtrace_doc_read_flags(path, NULL, flags, &doc, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	/* Warnings (the last line cut short, a streamed read's fallback) come back in err. */
	if (err[0])
		fprintf(stderr, "%s\n", err);
#ifdef __GLIBC__
	/*
	 * The read's tables by address and the reader thread's arena are free
	 * now, their pages still held (15 MB of a torch trace's): handed back
	 * before the symbols and the answer are worked out.
	 */
	malloc_trim(0);
#endif
	return doc;
}

/* n in decimal at p; returns the end. */
static char *put_u64(char *p, uint64_t n)
{
	char tmp[20];
	size_t k = 0;
	do
		tmp[k++] = (char)('0' + n % 10);
	while (n /= 10);
	while (k)
		*p++ = tmp[--k];
	return p;
}

const char *cli_bytes(char buf[32], uint64_t bytes, bool exact)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (exact || bytes < 1024) {
		char *p = put_u64(buf, bytes);
		memcpy(p, exact ? "" : " B", exact ? 1 : 3);
		return buf;
	}
	size_t u = 0;
	/*
	 * Tenths of the unit, rounded as printf's %.1f rounds the exact
	 * quotient (ties to even), in integers: a table of a 100 000 updates
	 * prints a million sizes. Past 2^53 a double no longer holds the count
	 * exactly, and printf decides.
	 */
	if (bytes < (1ull << 53)) {
		uint64_t d = 1024;
		while (bytes >= d * 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
			d *= 1024;
			u++;
		}
		uint64_t q = bytes * 10 / d, r = bytes * 10 % d;
		if (2 * r > d || (2 * r == d && (q & 1)))
			q++;
		char *p = put_u64(buf, q / 10);
		*p++ = '.';
		*p++ = (char)('0' + q % 10);
		*p++ = ' ';
		memcpy(p, units[u], 4);
		return buf;
	}
	double v = (double)bytes;
	for (v /= 1024; v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0]); u++)
		v /= 1024;
	snprintf(buf, 32, "%.1f %s", v, units[u]);
	return buf;
}

const char *cli_signed_bytes(char buf[40], double v, bool exact)
{
	char b[32];
	uint64_t m = (uint64_t)llround(fabs(v));
	snprintf(buf, 40, "%s%s", v < 0 ? "-" : "+", cli_bytes(b, m, exact));
	return buf;
}

const char *cli_ns(char buf[32], uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, 32, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, 32, "%.3f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, 32, "%.3f ms", (double)ns / 1e6);
	else
		snprintf(buf, 32, "%.3f s", (double)ns / 1e9);
	return buf;
}

const char *cli_moment(char *buf, size_t len, const struct cgtrace_memory_report *rep,
		       const struct cgtrace_moment *m)
{
	int n = 0;
	buf[0] = '\0';
	if (rep->update_count && m->update)
		n = snprintf(buf, len, ", update %llu%s", (unsigned long long)m->update,
			     m->inferred ? " (inferred)" : "");
	else if (rep->update_count && m->after)
		n = snprintf(buf, len, ", after update %llu", (unsigned long long)m->after);
	else if (rep->update_count)
		n = snprintf(buf, len, ", before update 1");
	if (m->phase && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", %s", m->phase);
	return buf;
}

void cli_json_moment(struct cli_jw *w, const char *prefix, const struct cgtrace_moment *m)
{
	char key[64];
	snprintf(key, sizeof(key), "%supdate", prefix);
	cli_jw_key(w, key);
	cli_jw_u64_or_null(w, m->update != 0, m->update);
	snprintf(key, sizeof(key), "%sphase", prefix);
	cli_jw_key(w, key);
	if (m->phase)
		cli_jw_str(w, m->phase);
	else
		cli_jw_null(w);
}

void cli_json_op_groups(struct cli_jw *w, const struct cgtrace_op_group *g, size_t n,
                        const char *op_key)
{
	cli_jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		cli_jw_begin_object(w);
		cli_jw_key_str(w, op_key, g[i].op_name);
		cli_jw_key_u64(w, "count", g[i].count);
		cli_jw_key_u64(w, "bytes", g[i].bytes);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

const char *cli_count(char buf[32], uint64_t n)
{
	char digits[24];
	size_t len = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, n), at = 0;
	for (size_t i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[at++] = ',';
		buf[at++] = digits[i];
	}
	buf[at] = '\0';
	return buf;
}

int cli_temp_fd(const char **dir)
{
	*dir = getenv("TMPDIR");
	if (!*dir || !**dir)
		*dir = "/tmp";
	int fd = open(*dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/cgtrace-spool-XXXXXX", *dir);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
	}
	return fd;
}

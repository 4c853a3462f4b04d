/* SPDX-License-Identifier: MIT */
/* Loading a trace for a command, and the numbers its text shows. */
#include "cli.h"

#include <inttypes.h>
#include <string.h>
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

const char *cli_bytes(char buf[32], uint64_t bytes, bool exact)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (exact || bytes < 1024) {
		snprintf(buf, 32, "%" PRIu64 "%s", bytes, exact ? "" : " B");
		return buf;
	}
	double v = (double)bytes;
	size_t u = 0;
	for (v /= 1024; v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0]); u++)
		v /= 1024;
	snprintf(buf, 32, "%.1f %s", v, units[u]);
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

/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

void cli_json_str(struct cli_buf *b, const char *s)
{
	if (!s) {
		cli_buf_lit(b, "null");
		return;
	}
	size_t n = strlen(s);
	char small[256], *q = CGTRACE_JSON_STRING_MAX(n) <= sizeof(small) ? small
					: malloc(CGTRACE_JSON_STRING_MAX(n));
	if (!q) {
		b->err = true;
		return;
	}
	cli_buf_put(b, q, cgtrace_json_string(q, s, n));
	if (q != small)
		free(q);
}

void cli_json_u64(struct cli_buf *b, uint64_t v)
{
	char tmp[24];
	cli_buf_put(b, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%" PRIu64, v));
}

void cli_json_key(struct cli_buf *b, bool *first, const char *key)
{
	if (!*first)
		cli_buf_putc(b, ',');
	*first = false;
	cli_json_str(b, key);
	cli_buf_putc(b, ':');
}

int cli_json_print(struct cli_buf *b)
{
	cli_buf_putc(b, '\n');
	int ret = b->err ? CLI_FAIL : CLI_OK;
	if (ret == CLI_OK && (fwrite(b->p, 1, b->len, stdout) != b->len || fflush(stdout))) {
		fprintf(stderr, "cgtrace: writing output: %s\n", strerror(errno));
		ret = CLI_FAIL;
	}
	cli_buf_fini(b);
	return ret;
}

/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt_num.h"
#include "jsonl_format.h"

void cli_print_help(const struct cli_cmd *cmd, FILE *f)
{
	fprintf(f, "Usage: cgtrace %s %s\n\n%s", cmd->name, cmd->args, cmd->help);
}

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "cgtrace %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nUsage: cgtrace %s %s\n", cmd->name, cmd->args);
	return CLI_USAGE;
}

const char *cli_trace_arg(const struct cli_cmd *cmd, int argc, char **argv, int *status)
{
	int left = argc - optind;
	if (left != 1) {
		*status = cli_usage_error(cmd, left ? "expected one TRACE argument, got %d"
						    : "missing TRACE argument",
					  left);
		return NULL;
	}
	return argv[optind];
}

struct cgtrace_doc *cli_load(const char *path)
{
	struct cgtrace_doc *doc = NULL;
	char err[1024];
	if (cgtrace_doc_read(path, NULL, &doc, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	/* A warning (the last line cut short) comes back in err. */
	if (err[0])
		fprintf(stderr, "%s\n", err);
	return doc;
}

const char *cli_bytes(char buf[32], uint64_t bytes, bool exact)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (exact || bytes < 1024) {
		buf[cg_fmt_u64(buf, bytes)] = '\0';
		if (!exact)
			strcat(buf, " B");
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
	size_t len = cg_fmt_u64(digits, n), at = 0;
	for (size_t i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[at++] = ',';
		buf[at++] = digits[i];
	}
	buf[at] = '\0';
	return buf;
}

void cli_json_str(struct cg_buf *b, const char *s)
{
	if (s)
		cg_json_put_str(b, s, strlen(s));
	else
		cg_buf_lit(b, "null");
}

void cli_json_u64(struct cg_buf *b, uint64_t v)
{
	char tmp[24];
	cg_buf_put(b, tmp, cg_fmt_u64(tmp, v));
}

void cli_json_key(struct cg_buf *b, bool *first, const char *key)
{
	if (!*first)
		cg_buf_putc(b, ',');
	*first = false;
	cli_json_str(b, key);
	cg_buf_putc(b, ':');
}

int cli_json_print(struct cg_buf *b)
{
	cg_buf_putc(b, '\n');
	int ret = b->err ? CLI_FAIL : CLI_OK;
	if (ret == CLI_OK && (fwrite(b->p, 1, b->len, stdout) != b->len || fflush(stdout))) {
		fprintf(stderr, "cgtrace: writing output: %s\n", strerror(errno));
		ret = CLI_FAIL;
	}
	cg_buf_fini(b);
	return ret;
}

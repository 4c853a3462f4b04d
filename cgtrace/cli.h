/* SPDX-License-Identifier: MIT */
/* What the cgtrace subcommands share: loading, number formatting, JSON output. */
#ifndef CGTRACE_CLI_H
#define CGTRACE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cgtrace.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

struct cli_cmd {
	const char *name;
	const char *args;
	const char *help;
	int (*run)(int argc, char **argv);
};

/* Prints "cgtrace NAME: message" and the usage line on stderr; returns CLI_USAGE. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_print_help(const struct cli_cmd *cmd, FILE *f);
/* Exactly one positional argument after options: the trace path. */
const char *cli_trace_arg(const struct cli_cmd *cmd, int argc, char **argv, int *status);

/* Reads a trace; prints the error on stderr and returns NULL on failure. */
struct cgtrace_doc *cli_load(const char *path);
/* The same with CGTRACE_READ_* flags (summary, memory, validate stream the memory records). */
struct cgtrace_doc *cli_load_flags(const char *path, unsigned flags);

/* "1.5 MiB" (binary units), or exact bytes when exact is set. */
const char *cli_bytes(char buf[32], uint64_t bytes, bool exact);
/* "1.234 ms" and friends for nanosecond timestamps. */
const char *cli_ns(char buf[32], uint64_t ns);
/* Thousands separators: 1,234,567. */
const char *cli_count(char buf[32], uint64_t n);

/* A growable output buffer: JSON goes out whole, or not at all when memory ran out. */
struct cli_buf {
	char *p;
	size_t len, cap;
	bool err; /* sticky: out of memory */
};

void cli_buf_put(struct cli_buf *b, const void *s, size_t n);
void cli_buf_putc(struct cli_buf *b, char c);
void cli_buf_puts(struct cli_buf *b, const char *s);
#define cli_buf_lit(b, s) cli_buf_put((b), (s), sizeof(s) - 1)
void cli_buf_fini(struct cli_buf *b);

/* Minimal JSON emitter: commas are placed by the caller through `first` flags. */
void cli_json_str(struct cli_buf *b, const char *s);
void cli_json_u64(struct cli_buf *b, uint64_t v);
void cli_json_key(struct cli_buf *b, bool *first, const char *key);
/* Writes b to stdout and frees it; CLI_FAIL on a write error. */
int cli_json_print(struct cli_buf *b);

/* The probe's settings recorded in meta (probe-settings.c). */
/* A meta tag's value, or NULL when the trace has no such tag. */
const char *cli_tag(const struct cgtrace_doc *doc, const char *key);
enum cli_note_style {
	CLI_NOTE_FULL,  /* summary and memory */
	CLI_NOTE_BRIEF, /* summary --brief, read through the cgprobe wrapper */
};
/*
 * The note that allocations under the probe's CGPROBE_MIN_BYTES are not in
 * the trace, so its peaks and totals are low; false (buf untouched) when the
 * trace recorded every size or the tag is malformed.
 */
bool cli_min_bytes_note(char *buf, size_t len, const struct cgtrace_doc *doc, bool exact,
			enum cli_note_style style);

extern const struct cli_cmd cli_summary, cli_memory, cli_validate, cli_timeline, cli_export;

#endif

/* SPDX-License-Identifier: MIT */
/*
 * JSON output: a writer that places the commas and checks the nesting, so
 * a command says what it writes (begin an object, a key, a number) and
 * nothing about punctuation. Compact, as the commands have always written
 * it: no space anywhere, one line unless asked (cli_jw_newline).
 *
 * The writer keeps nothing of what it wrote, only where it is: a caller
 * may write the buffer out and empty it between any two calls, so that a
 * long output (a Perfetto file) streams through a small buffer.
 */
#ifndef CGTRACE_JSON_OUT_H
#define CGTRACE_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli-buf.h"

/* Nesting deeper than this is an error; the outputs nest six deep at most (the report's). */
#define CLI_JW_MAX_DEPTH 64

struct cli_jw {
	struct cli_buf *b;
	uint64_t in_object; /* bit d: the container at depth d (from 0) is an object */
	uint64_t has_items; /* bit d: it has a member or an element already */
	unsigned depth;
	bool after_key; /* a key was written: its value comes next */
	bool newline;   /* cli_jw_newline: a line break before the next token */
	bool done;      /* the one top-level value is complete */
	bool err;       /* sticky: a value or an end where it does not belong */
};

/* Writes into b, which the caller owns (cli_jw_print frees it). */
void cli_jw_init(struct cli_jw *w, struct cli_buf *b);
void cli_jw_begin_object(struct cli_jw *w);
void cli_jw_end_object(struct cli_jw *w);
void cli_jw_begin_array(struct cli_jw *w);
void cli_jw_end_array(struct cli_jw *w);
/* A member's key in the object being written; its value is the next thing written. */
void cli_jw_key(struct cli_jw *w, const char *key);
/* Escaped as the trace writers escape (cgtrace_json_string); NULL is null. */
void cli_jw_str(struct cli_jw *w, const char *s);
void cli_jw_u64(struct cli_jw *w, uint64_t v);
/* v where there is one (has), else null: a figure a record may lack. */
void cli_jw_u64_or_null(struct cli_jw *w, bool has, uint64_t v);
void cli_jw_i64(struct cli_jw *w, int64_t v);
/* The shortest form that reads back as v; null when v is not finite (JSON has no NaN). */
void cli_jw_double(struct cli_jw *w, double v);
void cli_jw_bool(struct cli_jw *w, bool v);
void cli_jw_null(struct cli_jw *w);
/*
 * v thousandths as a decimal with exactly three places ("12.034"):
 * Perfetto's microseconds from nanoseconds, with every nanosecond kept.
 */
void cli_jw_thousandths(struct cli_jw *w, uint64_t v);
/* A value the caller holds as JSON text already (a number kept as a string); not checked. */
void cli_jw_raw(struct cli_jw *w, const char *json);
/* n numbers as an array. */
void cli_jw_u64s(struct cli_jw *w, const uint64_t *v, size_t n);
/* One uint64_t field, at offset, of each of n structs of size stride at base, as an array. */
void cli_jw_u64_column(struct cli_jw *w, const void *base, size_t n, size_t stride, size_t offset);
/*
 * The next token (a member, an element, an end) starts a new line, after
 * its comma: output read by eye or by line, such as one Perfetto event a
 * line, without the writer indenting anything.
 */
void cli_jw_newline(struct cli_jw *w);
/* A key and its value at once: the members most outputs are made of. */
void cli_jw_key_u64(struct cli_jw *w, const char *key, uint64_t v);
void cli_jw_key_str(struct cli_jw *w, const char *key, const char *s);
void cli_jw_key_bool(struct cli_jw *w, const char *key, bool v);
/* A uint64_t member of a struct, and the key it is written under. */
struct cli_jw_field {
	const char *key;
	size_t offset;
};
/* offsetof, refused at compile time unless the member is 8 bytes wide. */
#define CLI_JW_U64_OFFSET(type, member)                                                            \
	(offsetof(type, member) +                                                                  \
	 0 * sizeof(char[sizeof(((type *)0)->member) == sizeof(uint64_t) ? 1 : -1]))
/* The member under its own name. */
#define CLI_JW_U64(type, member) {#member, CLI_JW_U64_OFFSET(type, member)}
/* The n fields of the struct at base as members, in table order. */
void cli_jw_u64_fields(struct cli_jw *w, const void *base, const struct cli_jw_field *f,
		       size_t n);
/* 0 once one whole value is written; -EINVAL when it was not, -ENOMEM when memory ran out. */
int cli_jw_finish(const struct cli_jw *w);
/*
 * The value and a newline on standard output, the buffer freed; CLI_FAIL
 * (printed unless memory ran out) when cli_jw_finish fails or the write does.
 */
int cli_jw_print(struct cli_jw *w);

#endif

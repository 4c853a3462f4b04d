/* SPDX-License-Identifier: MIT */
/*
 * The one JSONL formatter: every line the project writes (sessions, the
 * preload probe, export) goes through cg_jsonl_format, so the key order and
 * spelling of the format live in a single place.
 */
#ifndef CG_JSONL_FORMAT_H
#define CG_JSONL_FORMAT_H

#include <stddef.h>

#include "buf.h"
#include "record.h"

/* Most bytes cg_json_put_str writes for n input bytes (every byte as \u00XX, plus quotes). */
#define CG_JSON_STR_MAX(n) (6 * (size_t)(n) + 2)

/*
 * Appends s[0..n) as a quoted JSON string. `"` and `\` are escaped, \n \r
 * \t \b \f by name, other bytes below 0x20 as \u00XX; DEL and valid UTF-8
 * pass through. Each maximal ill-formed UTF-8 subsequence (overlong forms,
 * surrogates, code points above U+10FFFF, truncated sequences, stray
 * continuation bytes) becomes one U+FFFD, so the output is always valid
 * UTF-8 whatever bytes a command line or path held. s may be NULL when n is 0.
 * On allocation failure b->err is set and nothing is appended.
 */
void cg_json_put_str(struct cg_buf *b, const char *s, size_t n);

/*
 * Appends one record as exactly one line ending in '\n'. Keys come in the
 * format's order; absent optional fields are left out (never `null`); meta
 * tags are written sorted bytewise by key (keys must be unique); a gradient
 * norm is written only when present and finite. An enum value without a
 * spelling is written as "" and an absent required string as "" (the
 * callers never produce either). On allocation failure b->err is set and
 * nothing is appended.
 */
void cg_jsonl_format(struct cg_buf *b, const struct cg_rec *r);
/* The most bytes cg_jsonl_format reserves for r (its line is shorter). */
size_t cg_jsonl_line_max(const struct cg_rec *r);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * A strict RFC 8259 validator for one line of a JSONL trace. It runs before
 * cJSON because cJSON 1.7 accepts `01`, `1.`, trailing text, repeated keys and
 * invalid UTF-8, all of which the reference reader (serde_json) rejects.
 *
 * Besides the RFC, the project decides: a string may not contain U+0000 (strings
 * become C strings), a key may not repeat within one object (compared after
 * unescaping) and arrays/objects nest at most CG_JSON_MAX_DEPTH levels deep
 * (serde_json's limit).
 *
 * Error offsets: err_off is the first byte at which the input stops being a
 * valid prefix of a JSON text (err_off == n when the input ends too early),
 * except that invalid UTF-8 points at the first byte of the malformed
 * sequence, a bad escape, lone surrogate or `\u0000` at its backslash, a
 * duplicate key at the opening quote of its second occurrence and a too deep
 * nesting at the bracket that opens level CG_JSON_MAX_DEPTH + 1.
 */
#ifndef CG_JSON_SCAN_H
#define CG_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CG_JSON_MAX_DEPTH 128

/* A number token, as offsets into the scanned input. */
struct cg_json_tok {
	uint32_t off, len;
};

struct cg_json_priv;

struct cg_json_scan {
	struct cg_json_tok *nums; /* every number token in textual order; owned */
	size_t n_nums, cap_nums;
	bool top_is_object; /* the single top-level value is an object (valid after success) */
	size_t err_off;     /* byte offset of the error in the input */
	char err[160];      /* single-line message without position; "" after success */
	struct cg_json_priv *priv; /* scratch reused across calls; owned */
};

void cg_json_scan_init(struct cg_json_scan *sc);
void cg_json_scan_fini(struct cg_json_scan *sc);

/*
 * Returns 0 when s[0..n) is exactly one JSON value with optional surrounding
 * whitespace; otherwise -EBADMSG (or -ENOMEM) with err and err_off set. Inputs
 * of 4 GiB or more are refused (-EBADMSG) because token offsets are 32-bit.
 */
int cg_json_scan(struct cg_json_scan *sc, const char *s, size_t n);

#endif

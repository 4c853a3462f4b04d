/* SPDX-License-Identifier: MIT */
#include "json-out.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "cli-opts.h"

/* A string as the trace writers escape it (cgtrace_json_string); NULL is null. */
static void put_str(struct cli_buf *b, const char *s)
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

/* ---- the writer ---- */

void cli_jw_init(struct cli_jw *w, struct cli_buf *b)
{
	*w = (struct cli_jw){.b = b};
}

static uint64_t level_bit(const struct cli_jw *w)
{
	return (uint64_t)1 << (w->depth - 1);
}

/* The line break cli_jw_newline asked for, once its token's comma is written. */
static void line_break(struct cli_jw *w)
{
	if (w->newline) {
		cli_buf_putc(w->b, '\n');
		w->newline = false;
	}
}

/* Before a value: the comma an array's next element needs; false where no value belongs. */
static bool value_begin(struct cli_jw *w)
{
	if (w->err)
		return false;
	if (!w->depth) {
		w->err = w->done;
		return !w->err;
	}
	if (w->in_object & level_bit(w)) {
		w->err = !w->after_key;
		w->after_key = false;
		return !w->err;
	}
	if (w->has_items & level_bit(w))
		cli_buf_putc(w->b, ',');
	w->has_items |= level_bit(w);
	line_break(w);
	return true;
}

static void value_end(struct cli_jw *w)
{
	if (!w->depth)
		w->done = true;
}

static void begin(struct cli_jw *w, bool object)
{
	if (!value_begin(w))
		return;
	if (w->depth == CLI_JW_MAX_DEPTH) {
		w->err = true;
		return;
	}
	w->depth++;
	w->has_items &= ~level_bit(w);
	if (object)
		w->in_object |= level_bit(w);
	else
		w->in_object &= ~level_bit(w);
	cli_buf_putc(w->b, object ? '{' : '[');
}

static void end(struct cli_jw *w, bool object)
{
	if (w->err)
		return;
	if (!w->depth || w->after_key || !(w->in_object & level_bit(w)) != !object) {
		w->err = true;
		return;
	}
	line_break(w);
	cli_buf_putc(w->b, object ? '}' : ']');
	w->depth--;
	value_end(w);
}

void cli_jw_begin_object(struct cli_jw *w)
{
	begin(w, true);
}

void cli_jw_end_object(struct cli_jw *w)
{
	end(w, true);
}

void cli_jw_begin_array(struct cli_jw *w)
{
	begin(w, false);
}

void cli_jw_end_array(struct cli_jw *w)
{
	end(w, false);
}

void cli_jw_key(struct cli_jw *w, const char *key)
{
	if (w->err)
		return;
	if (!w->depth || !(w->in_object & level_bit(w)) || w->after_key || !key) {
		w->err = true;
		return;
	}
	if (w->has_items & level_bit(w))
		cli_buf_putc(w->b, ',');
	w->has_items |= level_bit(w);
	line_break(w);
	put_str(w->b, key);
	cli_buf_putc(w->b, ':');
	w->after_key = true;
}

void cli_jw_str(struct cli_jw *w, const char *s)
{
	if (!value_begin(w))
		return;
	put_str(w->b, s);
	value_end(w);
}

void cli_jw_u64(struct cli_jw *w, uint64_t v)
{
	if (!value_begin(w))
		return;
	cli_buf_u64(w->b, v);
	value_end(w);
}

void cli_jw_u64_or_null(struct cli_jw *w, bool has, uint64_t v)
{
	if (has)
		cli_jw_u64(w, v);
	else
		cli_jw_null(w);
}

void cli_jw_i64(struct cli_jw *w, int64_t v)
{
	char tmp[24];
	if (!value_begin(w))
		return;
	cli_buf_put(w->b, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%" PRId64, v));
	value_end(w);
}

void cli_jw_double(struct cli_jw *w, double v)
{
	char tmp[32];
	if (!value_begin(w))
		return;
	if (!isfinite(v)) {
		cli_buf_lit(w->b, "null");
	} else {
		/* 15 digits read back as most values do; 17 always do. */
		int n = snprintf(tmp, sizeof(tmp), "%.15g", v);
		if (strtod(tmp, NULL) != v)
			n = snprintf(tmp, sizeof(tmp), "%.17g", v);
		cli_buf_put(w->b, tmp, (size_t)n);
	}
	value_end(w);
}

void cli_jw_bool(struct cli_jw *w, bool v)
{
	if (!value_begin(w))
		return;
	if (v)
		cli_buf_lit(w->b, "true");
	else
		cli_buf_lit(w->b, "false");
	value_end(w);
}

void cli_jw_null(struct cli_jw *w)
{
	if (!value_begin(w))
		return;
	cli_buf_lit(w->b, "null");
	value_end(w);
}

void cli_jw_thousandths(struct cli_jw *w, uint64_t v)
{
	char tmp[32];
	if (!value_begin(w))
		return;
	cli_buf_put(
	    w->b, tmp,
	    (size_t)snprintf(tmp, sizeof(tmp), "%" PRIu64 ".%03u", v / 1000, (unsigned)(v % 1000)));
	value_end(w);
}

void cli_jw_raw(struct cli_jw *w, const char *json)
{
	if (!value_begin(w))
		return;
	cli_buf_puts(w->b, json);
	value_end(w);
}

void cli_jw_u64_column(struct cli_jw *w, const void *base, size_t n, size_t stride, size_t offset)
{
	cli_jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		memcpy(&v, (const char *)base + i * stride + offset, sizeof(v));
		cli_jw_u64(w, v);
	}
	cli_jw_end_array(w);
}

void cli_jw_u64s(struct cli_jw *w, const uint64_t *v, size_t n)
{
	cli_jw_u64_column(w, v, n, sizeof(*v), 0);
}

void cli_jw_newline(struct cli_jw *w)
{
	w->newline = true;
}

void cli_jw_key_u64(struct cli_jw *w, const char *key, uint64_t v)
{
	cli_jw_key(w, key);
	cli_jw_u64(w, v);
}

void cli_jw_key_str(struct cli_jw *w, const char *key, const char *s)
{
	cli_jw_key(w, key);
	cli_jw_str(w, s);
}

void cli_jw_key_bool(struct cli_jw *w, const char *key, bool v)
{
	cli_jw_key(w, key);
	cli_jw_bool(w, v);
}

void cli_jw_u64_fields(struct cli_jw *w, const void *base, const struct cli_jw_field *f,
		       size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		memcpy(&v, (const char *)base + f[i].offset, sizeof(v));
		cli_jw_key_u64(w, f[i].key, v);
	}
}

int cli_jw_finish(const struct cli_jw *w)
{
	if (w->err || w->depth || !w->done)
		return -EINVAL;
	return w->b->err ? -ENOMEM : 0;
}

int cli_jw_print(struct cli_jw *w)
{
	if (cli_jw_finish(w) == -EINVAL) {
		fprintf(stderr, "cgtrace: the JSON output was left malformed (a bug)\n");
		cli_buf_fini(w->b);
		return CLI_FAIL;
	}
	struct cli_buf *b = w->b;
	cli_buf_putc(b, '\n');
	int ret = b->err ? CLI_FAIL : CLI_OK;
	if (ret == CLI_OK && (fwrite(b->p, 1, b->len, stdout) != b->len || fflush(stdout))) {
		fprintf(stderr, "cgtrace: writing output: %s\n", strerror(errno));
		ret = CLI_FAIL;
	}
	cli_buf_fini(b);
	return ret;
}

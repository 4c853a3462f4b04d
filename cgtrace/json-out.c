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

/* ---- the raw pieces ---- */

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

/* ---- the writer ---- */

void cli_jw_init(struct cli_jw *w, struct cli_buf *b)
{
	*w = (struct cli_jw){.b = b};
}

static uint64_t level_bit(const struct cli_jw *w)
{
	return (uint64_t)1 << (w->depth - 1);
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
	cli_json_str(w->b, key);
	cli_buf_putc(w->b, ':');
	w->after_key = true;
}

void cli_jw_str(struct cli_jw *w, const char *s)
{
	if (!value_begin(w))
		return;
	cli_json_str(w->b, s);
	value_end(w);
}

void cli_jw_u64(struct cli_jw *w, uint64_t v)
{
	if (!value_begin(w))
		return;
	cli_json_u64(w->b, v);
	value_end(w);
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
	return cli_json_print(w->b);
}

/* SPDX-License-Identifier: MIT */
/*
 * Training updates in the report's data block (docs/report.md): the
 * view's rows per update (view->steps; at most the page's limits->updates,
 * step-select.h's selection beyond), each device's figures as columns and
 * its trend in cgtrace steps's words, and the updates' starts for the
 * timeline, at most one a time bucket.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "step-select.h"
#include "step-text.h"

/* A row's flags in the data block. */
enum { FLAG_WARMUP = 1, FLAG_OPEN = 2 };

#define ROW_FIELD(f) CLI_JW_U64_OFFSET(struct cgtrace_step_row, f)
#define FIG_FIELD(f) CLI_JW_U64_OFFSET(struct cgtrace_step_figures, f)

/* The columns of the rows and of each device's figures, described once. */
static const struct cli_jw_field row_columns[] = {
    {"update", ROW_FIELD(update)},
    {"start", ROW_FIELD(start_ns)},
    {"end", ROW_FIELD(end_ns)},
};
static const struct cli_jw_field figure_columns[] = {
    {"peak", FIG_FIELD(peak_bytes)},   {"peak_ns", FIG_FIELD(peak_ns)},
    {"start", FIG_FIELD(start_bytes)}, {"end", FIG_FIELD(end_bytes)},
    {"allocs", FIG_FIELD(allocs)},
};

static uint64_t field(const void *base, size_t offset)
{
	uint64_t v;
	memcpy(&v, (const char *)base + offset, sizeof(v));
	return v;
}

/* One uint64_t field of the kept rows of an array of n structs of size stride, as an array. */
static void kept_column(struct cli_jw *w, const void *base, size_t stride, size_t offset,
                        const bool *keep, size_t n)
{
	cli_jw_begin_array(w);
	for (size_t r = 0; r < n; r++)
		if (keep[r])
			cli_jw_u64(w, field((const char *)base + r * stride, offset));
	cli_jw_end_array(w);
}

static void json_rows(struct cli_jw *w, const struct cgtrace_steps *st, const bool *keep)
{
	cli_jw_key(w, "rows");
	cli_jw_begin_object(w);
	for (size_t k = 0; k < sizeof(row_columns) / sizeof(row_columns[0]); k++) {
		cli_jw_key(w, row_columns[k].key);
		kept_column(w, st->rows, sizeof(*st->rows), row_columns[k].offset, keep,
		            st->n_rows);
	}
	cli_jw_key(w, "flags");
	cli_jw_begin_array(w);
	for (size_t r = 0; r < st->n_rows; r++)
		if (keep[r])
			cli_jw_u64(w, (st->rows[r].warmup ? FLAG_WARMUP : 0) |
			                  (st->rows[r].open ? FLAG_OPEN : 0));
	cli_jw_end_array(w);
	cli_jw_end_object(w);
}

static void json_trend(struct cli_jw *w, const struct cgtrace_steps *st, size_t d)
{
	const struct cgtrace_step_trend *t = &st->trends[d];
	char line[512];
	cli_jw_key(w, "trend");
	cli_jw_begin_object(w);
	cli_jw_key_u64(w, "fitted", t->fitted);
	cli_jw_key(w, "bytes_per_update");
	if (t->fitted >= 2)
		cli_jw_double(w, t->bytes_per_update);
	else
		cli_jw_null(w);
	cli_jw_key_bool(w, "steady", t->steady);
	cli_jw_key_str(w, "text", cli_step_trend(line, sizeof(line), st, d, false));
	cli_jw_end_object(w);
}

static void json_devices(struct cli_jw *w, const struct cgtrace_steps *st, const bool *keep)
{
	const size_t stride = sizeof(struct cgtrace_step_figures);
	cli_jw_key(w, "devices");
	cli_jw_begin_array(w);
	for (size_t d = 0; d < st->n_devices; d++) {
		const struct cgtrace_step_figures *f = st->figures[d];
		cli_jw_begin_object(w);
		cli_jw_key_str(w, "name", st->devices[d]);
		for (size_t k = 0; k < sizeof(figure_columns) / sizeof(figure_columns[0]); k++) {
			cli_jw_key(w, figure_columns[k].key);
			kept_column(w, f, stride, figure_columns[k].offset, keep, st->n_rows);
		}
		cli_jw_key(w, "cat");
		cli_jw_begin_array(w);
		for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
			kept_column(w, f, stride,
			            FIG_FIELD(peak_by_category[0]) + (size_t)c * sizeof(uint64_t),
			            keep, st->n_rows);
		cli_jw_end_array(w);
		json_trend(w, st, d);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

/* The time bucket of t on the view's grid, clamped to it. */
static size_t bucket_of(const struct cgtrace_view *v, uint64_t t)
{
	if (t <= v->start_ns || !v->bucket_ns)
		return 0;
	uint64_t i = (t - v->start_ns) / v->bucket_ns;
	return i < v->n_buckets ? (size_t)i : v->n_buckets ? v->n_buckets - 1 : 0;
}

/*
 * The updates' starts and ends for the timeline: every update when they
 * are no more than the time buckets, else the first to start in each
 * bucket, as fine as the grid draws.
 */
int report_json_update_marks(struct cli_jw *w, const struct cgtrace_view *v,
                             const struct cgtrace_steps *st)
{
	bool every = st->updates <= v->n_buckets;
	bool *mark = calloc(st->n_rows ? st->n_rows : 1, sizeof(*mark));
	if (!mark)
		return -ENOMEM;
	size_t last = SIZE_MAX;
	for (size_t r = 0; r < st->n_rows; r++) {
		if (st->rows[r].is_phase)
			continue;
		size_t b = bucket_of(v, st->rows[r].start_ns);
		mark[r] = every || b != last;
		last = b;
	}
	cli_jw_key(w, "marks");
	cli_jw_begin_object(w);
	cli_jw_key_bool(w, "every", every);
	static const struct cli_jw_field columns[] = {
	    {"update", ROW_FIELD(update)},
	    {"t0", ROW_FIELD(start_ns)},
	    {"t1", ROW_FIELD(end_ns)},
	};
	for (size_t k = 0; k < sizeof(columns) / sizeof(columns[0]); k++) {
		cli_jw_key(w, columns[k].key);
		kept_column(w, st->rows, sizeof(*st->rows), columns[k].offset, mark, st->n_rows);
	}
	cli_jw_end_object(w);
	free(mark);
	return 0;
}

int report_json_updates(struct report_ctx *c)
{
	struct cli_jw *w = c->w;
	const struct cgtrace_steps *st = c->v->steps;
	static const struct cgtrace_steps none = {.from = CGTRACE_UPDATES_NONE};
	if (!st)
		st = &none;
	bool *keep;
	size_t kept;
	if (cli_step_select(st, c->lim->updates, &keep, &kept) < 0)
		return -ENOMEM;
	cli_jw_key(w, "updates");
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "from", cli_updates_from_name(st->from));
	cli_jw_key_str(w, "from_text", cli_updates_from_words(st->from));
	cli_jw_key_u64(w, "warmup", st->warmup);
	cli_jw_key_u64(w, "total", st->updates);
	cli_jw_key_u64(w, "shown", kept);
	cli_jw_key_u64(w, "limit", c->lim->updates);
	json_rows(w, st, keep);
	json_devices(w, st, keep);
	int ret = report_json_update_marks(w, c->v, st);
	cli_jw_end_object(w);
	free(keep);
	return ret;
}

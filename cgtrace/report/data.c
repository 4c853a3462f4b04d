/* SPDX-License-Identifier: MIT */
/*
 * The report's data block: meta, the time grid, each device's buckets,
 * checkpoints and out-of-memory failures, the allocations kept one by one,
 * the peak, the sites. Arrays of numbers are written as columns (one array
 * per field) so that the block stays small; every list is capped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "palette.h"

const char *report_trace_name(const char *path)
{
	if (strcmp(path, "-") == 0)
		return "<stdin>";
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

void report_json_head(struct cli_jw *w, const char *format)
{
	cli_jw_key_str(w, "format", format);
	cli_jw_key_str(w, "generator", "cgtrace " CGTRACE_VERSION);
}

void report_json_colours(struct cli_jw *w)
{
	cli_jw_key(w, "categories");
	cli_jw_begin_array(w);
	for (int k = 0; k < CGTRACE_CAT_COUNT; k++)
		cli_jw_str(w, cgtrace_category_name((enum cgtrace_category)k));
	cli_jw_end_array(w);
	cli_jw_key(w, "palette");
	cli_palette_json(w);
}

/* FNV-1a: site names are short and few. */
static size_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

long report_name(struct report_names *t, const char *name)
{
	if (t->err)
		return -1;
	if (t->n * 2 >= t->n_slots) {
		size_t ns = t->n_slots ? t->n_slots * 2 : 256;
		size_t *slots = calloc(ns, sizeof(*slots));
		if (!slots) {
			t->err = true;
			return -1;
		}
		for (size_t i = 0; i < t->n; i++) {
			size_t h = name_hash(t->names[i]) & (ns - 1);
			while (slots[h])
				h = (h + 1) & (ns - 1);
			slots[h] = i + 1;
		}
		free(t->slots);
		t->slots = slots;
		t->n_slots = ns;
	}
	size_t h = name_hash(name) & (t->n_slots - 1);
	for (; t->slots[h]; h = (h + 1) & (t->n_slots - 1))
		if (strcmp(t->names[t->slots[h] - 1], name) == 0)
			return (long)(t->slots[h] - 1);
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **names = realloc(t->names, cap * sizeof(*names));
		if (!names) {
			t->err = true;
			return -1;
		}
		t->names = names;
		t->cap = cap;
	}
	char *copy = strdup(name);
	if (!copy) {
		t->err = true;
		return -1;
	}
	t->names[t->n] = copy;
	t->slots[h] = ++t->n;
	return (long)(t->n - 1);
}

void report_names_free(struct report_names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t->names);
	free(t->slots);
	*t = (struct report_names){0};
}

long report_site(struct report_ctx *c, uint64_t stack_id)
{
	if (!c->stacks || !stack_id)
		return -1;
	if (!cgtrace_doc_stack_frames(c->doc, stack_id, NULL, 0, NULL))
		return -1;
	char name[600];
	return report_name(&c->names,
			   cli_frame_name(name, sizeof(name), cli_sites_site(&c->sites, stack_id)));
}

#define BUCKET_FIELD(f) CLI_JW_U64_OFFSET(struct cgtrace_view_bucket, f)

/* The bucket columns the page draws and shows, described once. */
static const struct cli_jw_field bucket_columns[] = {
    {"max_ns", BUCKET_FIELD(max_ns)},     {"max", BUCKET_FIELD(max_bytes)},
    {"end_ns", BUCKET_FIELD(end_ns)},     {"end", BUCKET_FIELD(end_bytes)},
    {"drawn", BUCKET_FIELD(drawn_bytes)}, {"records", BUCKET_FIELD(records)},
    {"count", BUCKET_FIELD(max_live_count)}, {"drawn_count", BUCKET_FIELD(drawn_count)},
    {"allocs", BUCKET_FIELD(allocs)},     {"alloc_bytes", BUCKET_FIELD(alloc_bytes)},
};

static void json_buckets(struct cli_jw *w, const struct cgtrace_view *v,
                         const struct cgtrace_view_device *d)
{
	const size_t stride = sizeof(*d->buckets);
	cli_jw_begin_object(w);
	for (size_t k = 0; k < sizeof(bucket_columns) / sizeof(bucket_columns[0]); k++) {
		cli_jw_key(w, bucket_columns[k].key);
		cli_jw_u64_column(w, d->buckets, v->n_buckets, stride, bucket_columns[k].offset);
	}
	static const struct cli_jw_field by_cat[] = {
	    {"cat", BUCKET_FIELD(max_by_category[0])},
	    {"end_cat", BUCKET_FIELD(end_by_category[0])},
	};
	for (size_t k = 0; k < sizeof(by_cat) / sizeof(by_cat[0]); k++) {
		cli_jw_key(w, by_cat[k].key);
		cli_jw_begin_array(w);
		for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
			cli_jw_u64_column(w, d->buckets, v->n_buckets, stride,
			                  by_cat[k].offset + (size_t)c * sizeof(uint64_t));
		cli_jw_end_array(w);
	}
	cli_jw_end_object(w);
}

#define CKPT_FIELD(f) CLI_JW_U64_OFFSET(struct cgtrace_view_checkpoint, f)

/* A device's checkpoints as columns, reserved null where a checkpoint has none. */
static void json_checkpoints(struct cli_jw *w, const struct cgtrace_view_device *d)
{
	static const struct cli_jw_field columns[] = {
	    {"t", CKPT_FIELD(timestamp_ns)},
	    {"used", CKPT_FIELD(used_bytes)},
	    {"free", CKPT_FIELD(free_bytes)},
	};
	const size_t stride = sizeof(*d->checkpoints);
	cli_jw_begin_object(w);
	for (size_t k = 0; k < sizeof(columns) / sizeof(columns[0]); k++) {
		cli_jw_key(w, columns[k].key);
		cli_jw_u64_column(w, d->checkpoints, d->n_checkpoints, stride, columns[k].offset);
	}
	cli_jw_key(w, "reserved");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < d->n_checkpoints; i++)
		cli_jw_u64_or_null(w, d->checkpoints[i].has_reserved,
		                   d->checkpoints[i].reserved_bytes);
	cli_jw_end_array(w);
	cli_jw_end_object(w);
}

static const struct cli_jw_field oom_fields[] = {
    {"t", CKPT_FIELD(timestamp_ns)},   {"request", CKPT_FIELD(oom_request_bytes)},
    {"used", CKPT_FIELD(used_bytes)}, {"free", CKPT_FIELD(free_bytes)},
};

static void json_ooms(struct cli_jw *w, const struct cgtrace_view_device *d, size_t cap)
{
	size_t n = d->n_ooms_kept < cap ? d->n_ooms_kept : cap;
	cli_jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		cli_jw_begin_object(w);
		cli_jw_u64_fields(w, &d->ooms[i], oom_fields,
		                  sizeof(oom_fields) / sizeof(oom_fields[0]));
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

#define DEVICE_FIELD(f) CLI_JW_U64_OFFSET(struct cgtrace_view_device, f)

/* A device's figures, before and after its peak by category. */
static const struct cli_jw_field device_peak[] = {
    {"capacity", DEVICE_FIELD(capacity_bytes)},
    {"peak", DEVICE_FIELD(peak_bytes)},
    {"peak_ns", DEVICE_FIELD(peak_ns)},
};
static const struct cli_jw_field device_counts[] = {
    {"alloc_count", DEVICE_FIELD(alloc_count)}, {"free_count", DEVICE_FIELD(free_count)},
    {"alloc_bytes", DEVICE_FIELD(alloc_bytes)}, {"final_bytes", DEVICE_FIELD(final_bytes)},
};

void report_json_device_figures(struct cli_jw *w, const struct cgtrace_view_device *d)
{
	cli_jw_key_str(w, "name", d->device);
	cli_jw_u64_fields(w, d, device_peak, sizeof(device_peak) / sizeof(device_peak[0]));
	cli_jw_u64_fields(w, d, device_counts, sizeof(device_counts) / sizeof(device_counts[0]));
}

void report_json_series(struct cli_jw *w, const struct cgtrace_view *v,
                        const struct cgtrace_view_device *d)
{
	for (int col = 0; col < 2; col++) {
		cli_jw_key(w, col ? "v" : "t");
		cli_jw_begin_array(w);
		for (size_t i = 0; i < v->n_buckets; i++) {
			const struct cgtrace_view_bucket *bk = &d->buckets[i];
			if (!bk->records)
				continue;
			cli_jw_u64(w, col ? bk->max_bytes : bk->max_ns);
			if (bk->end_bytes != bk->max_bytes && bk->end_ns > bk->max_ns)
				cli_jw_u64(w, col ? bk->end_bytes : bk->end_ns);
		}
		cli_jw_end_array(w);
	}
}

static void json_devices(struct cli_jw *w, const struct cgtrace_view *v,
                         const struct report_limits *lim)
{
	cli_jw_key(w, "devices");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < v->n_devices; i++) {
		const struct cgtrace_view_device *d = &v->devices[i];
		cli_jw_begin_object(w);
		report_json_device_figures(w, d);
		cli_jw_key(w, "peak_by_category");
		cli_jw_u64s(w, d->peak_by_category, CGTRACE_CAT_COUNT);
		cli_jw_key(w, "buckets");
		json_buckets(w, v, d);
		cli_jw_key(w, "checkpoints");
		json_checkpoints(w, d);
		cli_jw_key(w, "ooms");
		json_ooms(w, d, lim->ooms);
		cli_jw_key_u64(w, "n_ooms", d->n_ooms);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

/* A span id, and its name when the trace has the span. */
static void span_members(struct cli_jw *w, const struct cgtrace_view *v, const char *id)
{
	const struct cgtrace_view_span *s = cgtrace_view_find_span(v, id);
	cli_jw_key_str(w, "span", id);
	if (s)
		cli_jw_key_str(w, "span_name", s->name);
}

/* A site as its index in the names, -1 without one. */
static void key_site(struct report_ctx *c, const char *key, uint64_t stack_id)
{
	cli_jw_key(c->w, key);
	cli_jw_i64(c->w, report_site(c, stack_id));
}

static void json_allocs(struct report_ctx *c)
{
	struct cli_jw *w = c->w;
	cli_jw_key(w, "allocs");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < c->v->n_allocs; i++) {
		const struct cgtrace_view_alloc *a = &c->v->allocs[i];
		cli_jw_begin_object(w);
		/* The buckets it is drawn in, first to end: the page stacks it there. */
		const uint64_t live[2] = {c->v->alloc_live[i].first_bucket,
		                          c->v->alloc_live[i].end_bucket};
		cli_jw_key_u64(w, "t0", a->alloc_ns);
		cli_jw_key(w, "t1");
		cli_jw_u64_or_null(w, a->freed, a->free_ns);
		cli_jw_key_u64(w, "b", a->bytes);
		cli_jw_key_u64(w, "d", a->device);
		cli_jw_key(w, "live");
		cli_jw_u64s(w, live, 2);
		cli_jw_key_u64(w, "c", (uint64_t)a->category);
		key_site(c, "s", a->stack_id);
		cli_jw_key_str(w, "tensor", a->tensor_id);
		if (a->op_name)
			cli_jw_key_str(w, "op", a->op_name);
		span_members(w, c->v, a->span_id);
		if (a->preexisting)
			cli_jw_key_bool(w, "pre", true);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

/* What a capped list leaves out: {"count":..,"bytes":..} under key. */
static void json_rest(struct cli_jw *w, const char *key, uint64_t count, uint64_t bytes)
{
	cli_jw_key(w, key);
	cli_jw_begin_object(w);
	cli_jw_key_u64(w, "count", count);
	cli_jw_key_u64(w, "bytes", bytes);
	cli_jw_end_object(w);
}

static int json_by_op(struct cli_jw *w, const struct cgtrace_memory_report *r, size_t cap)
{
	struct cgtrace_op_group *g = NULL;
	size_t n = 0;
	int ret = cgtrace_memory_peak_by_op(r, &g, &n);
	if (ret < 0)
		return ret;
	size_t shown = n < cap ? n : cap;
	uint64_t rest_bytes = 0;
	for (size_t i = shown; i < n; i++)
		rest_bytes = report_sat_add(rest_bytes, g[i].bytes);
	cli_jw_key(w, "by_op");
	cli_json_op_groups(w, g, shown, "op");
	json_rest(w, "by_op_rest", n - shown, rest_bytes);
	cgtrace_op_groups_free(g);
	return 0;
}

static void json_live(struct report_ctx *c, const struct cgtrace_live_alloc *a)
{
	struct cli_jw *w = c->w;
	cli_jw_begin_object(w);
	cli_jw_key_u64(w, "b", a->bytes);
	cli_jw_key_str(w, "device", a->device);
	cli_jw_key_u64(w, "c", (uint64_t)a->category);
	if (a->op_name)
		cli_jw_key_str(w, "op", a->op_name);
	span_members(w, c->v, a->span_id);
	cli_jw_key_str(w, "tensor", a->tensor_id);
	cli_jw_key_str(w, "dtype", a->dtype);
	cli_jw_key(w, "shape");
	cli_jw_u64s(w, a->shape, a->ndim);
	cli_jw_key_u64(w, "t", a->timestamp_ns);
	key_site(c, "s", a->stack_id);
	cli_jw_end_object(w);
}

_Static_assert(REPORT_BREAKDOWN <= CGTRACE_PEAK_LARGEST, "the report's view keeps enough");

static int json_peak(struct report_ctx *c)
{
	struct cli_jw *w = c->w;
	const struct cgtrace_memory_report *r = c->v->report;
	cli_jw_key(w, "peak");
	if (!r) {
		cli_jw_null(w);
		return 0;
	}
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "device", r->peak_device);
	cli_jw_key_u64(w, "bytes", r->peak_bytes);
	cli_jw_key_u64(w, "ns", r->peak_timestamp_ns);
	cli_jw_key_u64(w, "count", r->n_at_peak);
	cli_jw_key_u64(w, "autograd_retained", r->autograd_retained_bytes);
	cli_jw_key(w, "by_category");
	cli_jw_u64s(w, r->peak_by_category, CGTRACE_CAT_COUNT);
	size_t cap = c->lim->breakdown, shown = r->n_breakdown < cap ? r->n_breakdown : cap;
	/* Past the breakdown's largest, what it left out (a bounded read's). */
	uint64_t rest = r->rest_bytes;
	cli_jw_key(w, "breakdown");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < r->n_breakdown; i++) {
		if (i >= shown)
			rest = report_sat_add(rest, r->peak_breakdown[i].bytes);
		else
			json_live(c, &r->peak_breakdown[i]);
	}
	cli_jw_end_array(w);
	json_rest(w, "rest", r->n_at_peak - shown, rest);
	int ret = json_by_op(w, r, c->lim->ops);
	cli_jw_end_object(w);
	return ret;
}

/* A site row: its site, figures and the frames from the site outwards. */
static void json_row(struct cli_jw *w, struct cli_sites *s, const struct cli_site_row *r,
                     size_t frames)
{
	char name[600];
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "site", cli_frame_name(name, sizeof(name), r->site));
	cli_jw_key_str(w, "device", r->device);
	cli_jw_key_u64(w, "count", r->sum.count);
	cli_jw_key_u64(w, "total", r->sum.total_bytes);
	cli_jw_key_u64(w, "peak", r->sum.peak_bytes);
	cli_jw_key_u64(w, "leaked", r->sum.leaked_bytes);
	cli_jw_key_u64(w, "leaked_count", r->sum.leaked_count);
	cli_jw_key_u64(w, "temporary", r->sum.temporary_count);
	cli_jw_key_u64(w, "stacks", r->n_stacks);
	cli_jw_key(w, "frames");
	cli_jw_begin_array(w);
	const struct cgtrace_resolved_stack *st = cli_sites_stack(s, r->stack_id);
	for (size_t i = st ? st->site : 0, k = 0; st && i < st->n_frames && k < frames;
	     i++, k++) {
		cli_frame_name(name, sizeof(name), st->frames[i]);
		if (st->frames[i]->inlined)
			strncat(name, " [inlined]", sizeof(name) - strlen(name) - 1);
		cli_jw_str(w, name);
	}
	cli_jw_end_array(w);
	cli_jw_end_object(w);
}

/* One table of sites ranked by `by`: its first rows (lim->sites) and how many there are. */
static int json_rows(struct report_ctx *c, const char *name, enum cli_by by, uint64_t *count,
                     uint64_t *bytes)
{
	struct cli_site_row *rows;
	size_t n;
	int ret = cli_site_rows(&c->sites, NULL, false, by, &rows, &n);
	if (ret < 0)
		return ret;
	cli_jw_key(c->w, name);
	cli_jw_begin_array(c->w);
	for (size_t i = 0; i < n && i < c->lim->sites; i++)
		json_row(c->w, &c->sites, &rows[i], c->lim->frames);
	cli_jw_end_array(c->w);
	for (size_t i = 0; count && i < n; i++) {
		*count = report_sat_add(*count, rows[i].sum.leaked_count);
		*bytes = report_sat_add(*bytes, rows[i].sum.leaked_bytes);
	}
	char total[64];
	snprintf(total, sizeof(total), "%s_rows", name);
	cli_jw_key_u64(c->w, total, n);
	free(rows);
	return 0;
}

static int json_sites(struct report_ctx *c)
{
	cli_jw_key_bool(c->w, "stacks", c->stacks);
	if (!c->stacks)
		return 0;
	uint64_t count = 0, bytes = 0;
	int ret = json_rows(c, "top_sites", CLI_BY_PEAK, NULL, NULL);
	if (ret == 0)
		ret = json_rows(c, "leaks", CLI_BY_LEAKED, &count, &bytes);
	json_rest(c->w, "leaks_total", count, bytes);
	return ret;
}

static void json_meta(struct cli_jw *w, const struct cgtrace_doc *doc)
{
	cli_jw_key(w, "meta");
	if (!doc) {
		cli_jw_null(w);
		return;
	}
	struct cgtrace_meta m;
	cgtrace_doc_meta(doc, &m);
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "entrypoint", m.entrypoint);
	cli_jw_key_str(w, "run_id", m.run_id);
	cli_jw_key_str(w, "correlation_id", m.correlation_id);
	cli_jw_key_str(w, "timestamp", m.timestamp);
	cli_jw_key_str(w, "phase", cgtrace_phase_name(m.phase));
	cli_jw_key_u64(w, "capture_step", m.capture_step);
	cli_jw_key_str(w, "device", m.device);
	cli_jw_key(w, "tags");
	cli_jw_begin_object(w);
	for (size_t i = 0; i < m.n_tags; i++)
		cli_jw_key_str(w, m.tags[i].key, m.tags[i].value);
	cli_jw_end_object(w);
	cli_jw_end_object(w);
}

void report_json_grid(struct cli_jw *w, const struct cgtrace_view *v)
{
	cli_jw_key(w, "grid");
	cli_jw_begin_object(w);
	cli_jw_key_u64(w, "start_ns", v->start_ns);
	cli_jw_key_u64(w, "end_ns", v->end_ns);
	cli_jw_key_u64(w, "bucket_ns", v->bucket_ns);
	cli_jw_key_u64(w, "n", v->n_buckets);
	cli_jw_end_object(w);
}

static void json_grid(struct cli_jw *w, const struct cgtrace_view *v)
{
	report_json_grid(w, v);
	cli_jw_key(w, "capture");
	if (v->has_capture) {
		cli_jw_begin_object(w);
		cli_jw_key_u64(w, "begin_ns", v->capture_begin_ns);
		cli_jw_key_u64(w, "end_ns", v->capture_end_ns);
		cli_jw_end_object(w);
	} else {
		cli_jw_null(w);
	}
	cli_jw_key(w, "records");
	cli_jw_begin_object(w);
	cli_jw_key_u64(w, "memory", v->doc ? cgtrace_doc_records(v->doc, CGTRACE_KIND_MEMORY) : 0);
	cli_jw_key_u64(w, "device_memory",
	               v->doc ? cgtrace_doc_records(v->doc, CGTRACE_KIND_DEVICE_MEMORY) : 0);
	cli_jw_end_object(w);
}

/* The per-stack figures the site rows sum, as cli_sites_open computes them. */
static int open_sites(struct report_ctx *c, const char *path)
{
	if (!c->doc || cgtrace_doc_stack_count(c->doc) == 0)
		return CLI_OK;
	if (cli_sites_attach(&c->sites, (struct cgtrace_doc *)c->doc, path) != CLI_OK)
		return CLI_FAIL;
	/* The page shows each stack from its site outward. */
	c->sites.from_site = true;
	c->stacks = true;
	return CLI_OK;
}

size_t report_share(size_t full, size_t least, size_t pages)
{
	if (pages <= REPORT_FULL_PAGES)
		return full;
	size_t share = full * REPORT_FULL_PAGES / pages;
	return share > least ? share : least;
}

void report_limits(struct report_limits *out, size_t pages)
{
#define REPORT_LIMIT_SET(name, page, least) out->name = report_share(page, least, pages);
	REPORT_LIMITS(REPORT_LIMIT_SET)
#undef REPORT_LIMIT_SET
}

int report_json(struct cli_buf *b, const struct cgtrace_view *v, const char *path, const char *name,
                const struct report_limits *lim, const struct report_base *base)
{
	struct cli_jw w;
	struct report_ctx c = {.w = &w, .lim = lim, .v = v, .doc = v->doc};
	cli_jw_init(&w, b);
	int status = open_sites(&c, path);
	if (status == CLI_OK) {
		cli_jw_begin_object(&w);
		report_json_head(&w, "cgprobe-report/1");
		cli_jw_key_str(&w, "trace", name);
		report_json_colours(&w);
		json_meta(&w, c.doc);
		json_grid(&w, v);
		json_devices(&w, v, lim);
		json_allocs(&c);
		int r = json_peak(&c);
		if (r == 0)
			r = json_sites(&c);
		if (r == 0)
			r = report_json_spans(&c);
		if (r == 0)
			r = report_json_updates(&c);
		if (r == 0 && base)
			r = report_json_baseline(&c, base);
		/* Last: every site name the members above referred to. */
		cli_jw_key(&w, "sites");
		cli_jw_begin_array(&w);
		for (size_t i = 0; i < c.names.n; i++)
			cli_jw_str(&w, c.names.names[i]);
		cli_jw_end_array(&w);
		cli_jw_end_object(&w);
		if (r == 0)
			r = c.names.err ? -ENOMEM : cli_jw_finish(&w);
		if (r < 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(-r));
			status = CLI_FAIL;
		}
	}
	cli_sites_close(&c.sites);
	report_names_free(&c.names);
	return status;
}

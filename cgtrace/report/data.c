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
	const struct cgtrace_resolved_stack *st = cli_sites_stack(&c->sites, stack_id);
	if (!st)
		return -1;
	char name[600];
	return report_name(&c->names, cli_frame_name(name, sizeof(name), cli_site_frame(st)));
}

static void key(struct cli_buf *b, const char *k)
{
	cli_buf_putc(b, ',');
	cli_json_str(b, k);
	cli_buf_putc(b, ':');
}

static void key_u64(struct cli_buf *b, bool *first, const char *k, uint64_t v)
{
	cli_json_key(b, first, k);
	cli_json_u64(b, v);
}

static void key_str(struct cli_buf *b, bool *first, const char *k, const char *v)
{
	cli_json_key(b, first, k);
	cli_json_str(b, v);
}

static void json_long(struct cli_buf *b, long v)
{
	if (v < 0)
		cli_buf_lit(b, "-1");
	else
		cli_json_u64(b, (uint64_t)v);
}

/* One u64 field of n structs of size stride, at offset off, as a JSON array. */
static void column(struct cli_buf *b, const void *base, size_t n, size_t stride, size_t off)
{
	cli_buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		memcpy(&v, (const char *)base + i * stride + off, sizeof(v));
		if (i)
			cli_buf_putc(b, ',');
		cli_json_u64(b, v);
	}
	cli_buf_putc(b, ']');
}

void report_json_u64s(struct cli_buf *b, const uint64_t *v, size_t n)
{
	cli_buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			cli_buf_putc(b, ',');
		cli_json_u64(b, v[i]);
	}
	cli_buf_putc(b, ']');
}

/* A u64 member of a view struct, named as the data block names it. */
struct field {
	const char *key;
	size_t off;
};

/* The fields of one struct at base as members of the object being written. */
static void members(struct cli_buf *b, bool *first, const void *base, const struct field *f,
                    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		memcpy(&v, (const char *)base + f[i].off, sizeof(v));
		key_u64(b, first, f[i].key, v);
	}
}

#define BUCKET_FIELD(f) offsetof(struct cgtrace_view_bucket, f)

/* The bucket columns the page draws and shows, described once. */
static const struct field bucket_columns[] = {
    {"max_ns", BUCKET_FIELD(max_ns)},     {"max", BUCKET_FIELD(max_bytes)},
    {"end_ns", BUCKET_FIELD(end_ns)},     {"end", BUCKET_FIELD(end_bytes)},
    {"drawn", BUCKET_FIELD(drawn_bytes)}, {"records", BUCKET_FIELD(records)},
    {"count", BUCKET_FIELD(max_live_count)}, {"drawn_count", BUCKET_FIELD(drawn_count)},
    {"allocs", BUCKET_FIELD(allocs)},     {"alloc_bytes", BUCKET_FIELD(alloc_bytes)},
};

static void json_buckets(struct cli_buf *b, const struct cgtrace_view *v,
                         const struct cgtrace_view_device *d)
{
	const size_t stride = sizeof(*d->buckets);
	cli_buf_putc(b, '{');
	for (size_t k = 0; k < sizeof(bucket_columns) / sizeof(bucket_columns[0]); k++) {
		if (k)
			cli_buf_putc(b, ',');
		cli_json_str(b, bucket_columns[k].key);
		cli_buf_putc(b, ':');
		column(b, d->buckets, v->n_buckets, stride, bucket_columns[k].off);
	}
	static const struct {
		const char *key;
		size_t off;
	} by_cat[] = {
	    {"cat", BUCKET_FIELD(max_by_category)},
	    {"end_cat", BUCKET_FIELD(end_by_category)},
	};
	for (size_t k = 0; k < sizeof(by_cat) / sizeof(by_cat[0]); k++) {
		key(b, by_cat[k].key);
		cli_buf_putc(b, '[');
		for (int c = 0; c < CGTRACE_CAT_COUNT; c++) {
			if (c)
				cli_buf_putc(b, ',');
			column(b, d->buckets, v->n_buckets, stride,
			       by_cat[k].off + (size_t)c * sizeof(uint64_t));
		}
		cli_buf_putc(b, ']');
	}
	cli_buf_putc(b, '}');
}

#define CKPT_FIELD(f) offsetof(struct cgtrace_view_checkpoint, f)

static void json_checkpoints(struct cli_buf *b, const struct cgtrace_view_device *d)
{
	const size_t stride = sizeof(*d->checkpoints);
	cli_buf_lit(b, "{\"t\":");
	column(b, d->checkpoints, d->n_checkpoints, stride, CKPT_FIELD(timestamp_ns));
	key(b, "used");
	column(b, d->checkpoints, d->n_checkpoints, stride, CKPT_FIELD(used_bytes));
	key(b, "free");
	column(b, d->checkpoints, d->n_checkpoints, stride, CKPT_FIELD(free_bytes));
	key(b, "reserved");
	cli_buf_putc(b, '[');
	for (size_t i = 0; i < d->n_checkpoints; i++) {
		if (i)
			cli_buf_putc(b, ',');
		if (d->checkpoints[i].has_reserved)
			cli_json_u64(b, d->checkpoints[i].reserved_bytes);
		else
			cli_buf_lit(b, "null");
	}
	cli_buf_lit(b, "]}");
}

static const struct field oom_fields[] = {
    {"t", CKPT_FIELD(timestamp_ns)},   {"request", CKPT_FIELD(oom_request_bytes)},
    {"used", CKPT_FIELD(used_bytes)}, {"free", CKPT_FIELD(free_bytes)},
};

static void json_ooms(struct cli_buf *b, const struct cgtrace_view_device *d)
{
	size_t n = d->n_ooms_kept < REPORT_OOMS ? d->n_ooms_kept : REPORT_OOMS;
	cli_buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		bool first = true;
		cli_buf_puts(b, i ? ",{" : "{");
		members(b, &first, &d->ooms[i], oom_fields, sizeof(oom_fields) / sizeof(oom_fields[0]));
		cli_buf_putc(b, '}');
	}
	cli_buf_putc(b, ']');
}

#define DEVICE_FIELD(f) offsetof(struct cgtrace_view_device, f)

/* A device's figures, before and after its peak by category. */
static const struct field device_peak[] = {
    {"capacity", DEVICE_FIELD(capacity_bytes)},
    {"peak", DEVICE_FIELD(peak_bytes)},
    {"peak_ns", DEVICE_FIELD(peak_ns)},
};
static const struct field device_counts[] = {
    {"alloc_count", DEVICE_FIELD(alloc_count)}, {"free_count", DEVICE_FIELD(free_count)},
    {"alloc_bytes", DEVICE_FIELD(alloc_bytes)}, {"final_bytes", DEVICE_FIELD(final_bytes)},
};

static void json_devices(struct cli_buf *b, const struct cgtrace_view *v)
{
	key(b, "devices");
	cli_buf_putc(b, '[');
	for (size_t i = 0; i < v->n_devices; i++) {
		const struct cgtrace_view_device *d = &v->devices[i];
		bool first = true;
		cli_buf_puts(b, i ? ",{" : "{");
		key_str(b, &first, "name", d->device);
		members(b, &first, d, device_peak, sizeof(device_peak) / sizeof(device_peak[0]));
		key(b, "peak_by_category");
		report_json_u64s(b, d->peak_by_category, CGTRACE_CAT_COUNT);
		members(b, &first, d, device_counts,
		        sizeof(device_counts) / sizeof(device_counts[0]));
		key(b, "buckets");
		json_buckets(b, v, d);
		key(b, "checkpoints");
		json_checkpoints(b, d);
		key(b, "ooms");
		json_ooms(b, d);
		key_u64(b, &first, "n_ooms", d->n_ooms);
		cli_buf_putc(b, '}');
	}
	cli_buf_putc(b, ']');
}

/* A span id, and its name when the trace has the span. */
static void span_members(struct cli_buf *b, bool *first, const struct cgtrace_view *v,
                         const char *id)
{
	const struct cgtrace_view_span *s = cgtrace_view_find_span(v, id);
	key_str(b, first, "span", id);
	if (s)
		key_str(b, first, "span_name", s->name);
}

static void json_allocs(struct report_ctx *c)
{
	struct cli_buf *b = c->b;
	key(b, "allocs");
	cli_buf_putc(b, '[');
	for (size_t i = 0; i < c->v->n_allocs; i++) {
		const struct cgtrace_view_alloc *a = &c->v->allocs[i];
		bool first = true;
		cli_buf_puts(b, i ? ",{" : "{");
		/* The buckets it is drawn in, first to end: the page stacks it there. */
		const uint64_t live[2] = {c->v->alloc_live[i].first_bucket,
		                          c->v->alloc_live[i].end_bucket};
		key_u64(b, &first, "t0", a->alloc_ns);
		cli_json_key(b, &first, "t1");
		if (a->freed)
			cli_json_u64(b, a->free_ns);
		else
			cli_buf_lit(b, "null");
		key_u64(b, &first, "b", a->bytes);
		key_u64(b, &first, "d", a->device);
		cli_json_key(b, &first, "live");
		report_json_u64s(b, live, 2);
		key_u64(b, &first, "c", (uint64_t)a->category);
		cli_json_key(b, &first, "s");
		json_long(b, report_site(c, a->stack_id));
		key_str(b, &first, "tensor", a->tensor_id);
		if (a->op_name)
			key_str(b, &first, "op", a->op_name);
		span_members(b, &first, c->v, a->span_id);
		if (a->preexisting)
			cli_buf_lit(b, ",\"pre\":true");
		cli_buf_putc(b, '}');
	}
	cli_buf_putc(b, ']');
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static int json_by_op(struct cli_buf *b, const struct cgtrace_memory_report *r)
{
	struct cgtrace_op_group *g = NULL;
	size_t n = 0;
	int ret = cgtrace_memory_peak_by_op(r, &g, &n);
	if (ret < 0)
		return ret;
	size_t shown = n < REPORT_OPS ? n : REPORT_OPS;
	uint64_t rest_count = 0, rest_bytes = 0;
	key(b, "by_op");
	cli_buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i >= shown) {
			rest_count++;
			rest_bytes = sat_add(rest_bytes, g[i].bytes);
			continue;
		}
		bool first = true;
		cli_buf_puts(b, i ? ",{" : "{");
		key_str(b, &first, "op", g[i].op_name);
		key_u64(b, &first, "count", g[i].count);
		key_u64(b, &first, "bytes", g[i].bytes);
		cli_buf_putc(b, '}');
	}
	cli_buf_lit(b, "],\"by_op_rest\":{\"count\":");
	cli_json_u64(b, rest_count);
	cli_buf_lit(b, ",\"bytes\":");
	cli_json_u64(b, rest_bytes);
	cli_buf_putc(b, '}');
	cgtrace_op_groups_free(g);
	return 0;
}

static void json_live(struct report_ctx *c, const struct cgtrace_live_alloc *a)
{
	struct cli_buf *b = c->b;
	bool first = true;
	cli_buf_putc(b, '{');
	key_u64(b, &first, "b", a->bytes);
	key_str(b, &first, "device", a->device);
	key_u64(b, &first, "c", (uint64_t)a->category);
	if (a->op_name)
		key_str(b, &first, "op", a->op_name);
	span_members(b, &first, c->v, a->span_id);
	key_str(b, &first, "tensor", a->tensor_id);
	key_str(b, &first, "dtype", a->dtype);
	cli_json_key(b, &first, "shape");
	report_json_u64s(b, a->shape, a->ndim);
	key_u64(b, &first, "t", a->timestamp_ns);
	cli_json_key(b, &first, "s");
	json_long(b, report_site(c, a->stack_id));
	cli_buf_putc(b, '}');
}

static int json_peak(struct report_ctx *c)
{
	struct cli_buf *b = c->b;
	const struct cgtrace_memory_report *r = c->v->report;
	bool first = true;
	key(b, "peak");
	if (!r) {
		cli_buf_lit(b, "null");
		return 0;
	}
	cli_buf_putc(b, '{');
	key_str(b, &first, "device", r->peak_device);
	key_u64(b, &first, "bytes", r->peak_bytes);
	key_u64(b, &first, "ns", r->peak_timestamp_ns);
	key_u64(b, &first, "count", r->n_breakdown);
	key_u64(b, &first, "autograd_retained", r->autograd_retained_bytes);
	key(b, "by_category");
	report_json_u64s(b, r->peak_by_category, CGTRACE_CAT_COUNT);
	size_t shown = r->n_breakdown < REPORT_BREAKDOWN ? r->n_breakdown : REPORT_BREAKDOWN;
	uint64_t rest = 0;
	key(b, "breakdown");
	cli_buf_putc(b, '[');
	for (size_t i = 0; i < r->n_breakdown; i++) {
		if (i >= shown) {
			rest = sat_add(rest, r->peak_breakdown[i].bytes);
			continue;
		}
		if (i)
			cli_buf_putc(b, ',');
		json_live(c, &r->peak_breakdown[i]);
	}
	cli_buf_lit(b, "],\"rest\":{\"count\":");
	cli_json_u64(b, r->n_breakdown - shown);
	cli_buf_lit(b, ",\"bytes\":");
	cli_json_u64(b, rest);
	cli_buf_putc(b, '}');
	int ret = json_by_op(b, r);
	cli_buf_putc(b, '}');
	return ret;
}

/* A site row: its site, figures and the frames from the site outwards. */
static void json_row(struct cli_buf *b, const struct cli_site_row *r)
{
	char name[600];
	bool first = true;
	cli_buf_putc(b, '{');
	key_str(b, &first, "site", cli_frame_name(name, sizeof(name), cli_site_frame(r->stack)));
	key_str(b, &first, "device", r->device);
	key_u64(b, &first, "count", r->sum.count);
	key_u64(b, &first, "total", r->sum.total_bytes);
	key_u64(b, &first, "peak", r->sum.peak_bytes);
	key_u64(b, &first, "leaked", r->sum.leaked_bytes);
	key_u64(b, &first, "leaked_count", r->sum.leaked_count);
	key_u64(b, &first, "temporary", r->sum.temporary_count);
	key_u64(b, &first, "stacks", r->n_stacks);
	cli_json_key(b, &first, "frames");
	cli_buf_putc(b, '[');
	const struct cgtrace_resolved_stack *st = r->stack;
	for (size_t i = st ? st->site : 0, k = 0; st && i < st->n_frames && k < REPORT_FRAMES;
	     i++, k++) {
		if (k)
			cli_buf_putc(b, ',');
		cli_frame_name(name, sizeof(name), st->frames[i]);
		if (st->frames[i]->inlined)
			strncat(name, " [inlined]", sizeof(name) - strlen(name) - 1);
		cli_json_str(b, name);
	}
	cli_buf_lit(b, "]}");
}

/* One table of sites ranked by `by`: its first REPORT_SITES rows and how many there are. */
static int json_rows(struct report_ctx *c, const char *name, enum cli_by by, uint64_t *count,
                     uint64_t *bytes)
{
	struct cli_site_row *rows;
	size_t n;
	int ret = cli_site_rows(&c->sites, NULL, false, by, &rows, &n);
	if (ret < 0)
		return ret;
	key(c->b, name);
	cli_buf_putc(c->b, '[');
	for (size_t i = 0; i < n && i < REPORT_SITES; i++) {
		if (i)
			cli_buf_putc(c->b, ',');
		json_row(c->b, &rows[i]);
	}
	cli_buf_putc(c->b, ']');
	for (size_t i = 0; count && i < n; i++) {
		*count = sat_add(*count, rows[i].sum.leaked_count);
		*bytes = sat_add(*bytes, rows[i].sum.leaked_bytes);
	}
	char total[64];
	snprintf(total, sizeof(total), "%s_rows", name);
	key(c->b, total);
	cli_json_u64(c->b, n);
	free(rows);
	return 0;
}

static int json_sites(struct report_ctx *c)
{
	struct cli_buf *b = c->b;
	cli_buf_lit(b, ",\"stacks\":");
	cli_buf_puts(b, c->stacks ? "true" : "false");
	if (!c->stacks)
		return 0;
	uint64_t count = 0, bytes = 0;
	int ret = json_rows(c, "top_sites", CLI_BY_PEAK, NULL, NULL);
	if (ret == 0)
		ret = json_rows(c, "leaks", CLI_BY_LEAKED, &count, &bytes);
	cli_buf_lit(b, ",\"leaks_total\":{\"count\":");
	cli_json_u64(b, count);
	cli_buf_lit(b, ",\"bytes\":");
	cli_json_u64(b, bytes);
	cli_buf_putc(b, '}');
	return ret;
}

static void json_meta(struct cli_buf *b, const struct cgtrace_doc *doc)
{
	key(b, "meta");
	if (!doc) {
		cli_buf_lit(b, "null");
		return;
	}
	struct cgtrace_meta m;
	cgtrace_doc_meta(doc, &m);
	bool first = true;
	cli_buf_putc(b, '{');
	key_str(b, &first, "entrypoint", m.entrypoint);
	key_str(b, &first, "run_id", m.run_id);
	key_str(b, &first, "correlation_id", m.correlation_id);
	key_str(b, &first, "timestamp", m.timestamp);
	key_str(b, &first, "phase", cgtrace_phase_name(m.phase));
	key_u64(b, &first, "capture_step", m.capture_step);
	key_str(b, &first, "device", m.device);
	key(b, "tags");
	cli_buf_putc(b, '{');
	bool f2 = true;
	for (size_t i = 0; i < m.n_tags; i++)
		key_str(b, &f2, m.tags[i].key, m.tags[i].value);
	cli_buf_lit(b, "}}");
}

static void json_grid(struct cli_buf *b, const struct cgtrace_view *v)
{
	bool first = true;
	key(b, "grid");
	cli_buf_putc(b, '{');
	key_u64(b, &first, "start_ns", v->start_ns);
	key_u64(b, &first, "end_ns", v->end_ns);
	key_u64(b, &first, "bucket_ns", v->bucket_ns);
	key_u64(b, &first, "n", v->n_buckets);
	cli_buf_putc(b, '}');
	key(b, "capture");
	if (v->has_capture) {
		first = true;
		cli_buf_putc(b, '{');
		key_u64(b, &first, "begin_ns", v->capture_begin_ns);
		key_u64(b, &first, "end_ns", v->capture_end_ns);
		cli_buf_putc(b, '}');
	} else {
		cli_buf_lit(b, "null");
	}
	first = true;
	key(b, "records");
	cli_buf_putc(b, '{');
	key_u64(b, &first, "memory", v->doc ? cgtrace_doc_records(v->doc, CGTRACE_KIND_MEMORY) : 0);
	key_u64(b, &first, "device_memory",
	        v->doc ? cgtrace_doc_records(v->doc, CGTRACE_KIND_DEVICE_MEMORY) : 0);
	cli_buf_putc(b, '}');
}

/* The per-stack figures the site rows sum, as cli_sites_open computes them. */
static int open_sites(struct report_ctx *c, const char *path)
{
	if (!c->doc || cgtrace_doc_stack_count(c->doc) == 0)
		return CLI_OK;
	if (cli_sites_attach_stats(&c->sites, (struct cgtrace_doc *)c->doc, path) != CLI_OK)
		return CLI_FAIL;
	c->stacks = true;
	return CLI_OK;
}

int report_json(struct cli_buf *b, const struct cgtrace_view *v, const char *path, const char *name)
{
	struct report_ctx c = {.b = b, .v = v, .doc = v->doc};
	int status = open_sites(&c, path);
	if (status == CLI_OK) {
		cli_buf_lit(b, "{\"format\":\"cgprobe-report/1\"");
		key(b, "generator");
		cli_json_str(b, "cgtrace " CGTRACE_VERSION);
		key(b, "trace");
		cli_json_str(b, name);
		key(b, "categories");
		cli_buf_putc(b, '[');
		for (int k = 0; k < CGTRACE_CAT_COUNT; k++) {
			if (k)
				cli_buf_putc(b, ',');
			cli_json_str(b, cgtrace_category_name((enum cgtrace_category)k));
		}
		cli_buf_putc(b, ']');
		key(b, "palette");
		cli_palette_json(b);
		json_meta(b, c.doc);
		json_grid(b, v);
		json_devices(b, v);
		json_allocs(&c);
		int r = json_peak(&c);
		if (r == 0)
			r = json_sites(&c);
		if (r == 0)
			r = report_json_spans(&c);
		/* Last: every site name the members above referred to. */
		key(b, "sites");
		cli_buf_putc(b, '[');
		for (size_t i = 0; i < c.names.n; i++) {
			if (i)
				cli_buf_putc(b, ',');
			cli_json_str(b, c.names.names[i]);
		}
		cli_buf_lit(b, "]}");
		if (r < 0 || c.names.err)
			b->err = true;
		if (b->err) {
			fprintf(stderr, "%s: %s\n", path, strerror(r < 0 ? -r : ENOMEM));
			status = CLI_FAIL;
		}
	}
	cli_sites_close(&c.sites);
	report_names_free(&c.names);
	return status;
}

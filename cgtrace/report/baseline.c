/* SPDX-License-Identifier: MIT */
/*
 * A page compared with a baseline (cgtrace report --baseline BASE,
 * docs/report.md, "Against a baseline"): BASE's live bytes per device as
 * samples, at most two a bucket of its view, so the page draws its line
 * under the new run's at no more cost than a job's lane; BASE's updates'
 * starts, so the page can align the two by update number; and the
 * headline figures of both with their signed differences, worked out
 * here so that a test reads them from the data as the page shows them.
 */
#include <stdint.h>
#include <string.h>

#include "data.h"
#include "step-text.h"

/* A figure of both runs: new, base (null where a run has none), signed, in percent of base. */
static void json_pair(struct cli_jw *w, const char *key, const uint64_t *now, const uint64_t *base)
{
	uint64_t a = now ? *now : 0, b = base ? *base : 0;
	cli_jw_key(w, key);
	cli_jw_begin_object(w);
	cli_jw_key(w, "new");
	cli_jw_u64_or_null(w, now != NULL, a);
	cli_jw_key(w, "base");
	cli_jw_u64_or_null(w, base != NULL, b);
	cli_jw_key(w, "delta");
	/* Byte counts past 2^63 are saturated totals: their difference as a number of its own. */
	if (a >= b && a - b <= (uint64_t)INT64_MAX)
		cli_jw_i64(w, (int64_t)(a - b));
	else if (b > a && b - a <= (uint64_t)INT64_MAX)
		cli_jw_i64(w, -(int64_t)(b - a));
	else
		cli_jw_double(w, (double)a - (double)b);
	cli_jw_key(w, "pct");
	if (b)
		cli_jw_double(w, 100.0 * ((double)a - (double)b) / (double)b);
	else
		cli_jw_null(w);
	cli_jw_end_object(w);
}

static const struct cgtrace_view_device *device_named(const struct cgtrace_view *v,
                                                      const char *name)
{
	for (size_t i = 0; i < v->n_devices; i++)
		if (strcmp(v->devices[i].device, name) == 0)
			return &v->devices[i];
	return NULL;
}

/* Figures summed over a view's devices, saturating. */
struct totals {
	uint64_t leaked, allocs, alloc_bytes, duration;
};

static void sum_devices(const struct cgtrace_view *v, struct totals *t)
{
	*t = (struct totals){.duration = v->end_ns - v->start_ns};
	for (size_t i = 0; i < v->n_devices; i++) {
		t->leaked = report_sat_add(t->leaked, v->devices[i].final_bytes);
		t->allocs = report_sat_add(t->allocs, v->devices[i].alloc_count);
		t->alloc_bytes = report_sat_add(t->alloc_bytes, v->devices[i].alloc_bytes);
	}
}

/* Each device's peak of either run, the new run's devices first, then those only BASE has. */
static void json_diff(struct cli_jw *w, const struct cgtrace_view *v, const struct cgtrace_view *b)
{
	cli_jw_key(w, "diff");
	cli_jw_begin_object(w);
	cli_jw_key(w, "devices");
	cli_jw_begin_array(w);
	for (int side = 0; side < 2; side++) {
		const struct cgtrace_view *from = side ? b : v, *other = side ? v : b;
		for (size_t i = 0; i < from->n_devices; i++) {
			const struct cgtrace_view_device *d = &from->devices[i];
			const struct cgtrace_view_device *o = device_named(other, d->device);
			if (side && o)
				continue;
			const struct cgtrace_view_device *now = side ? NULL : d,
			                                 *base = side ? d : o;
			cli_jw_begin_object(w);
			cli_jw_key_str(w, "name", d->device);
			json_pair(w, "peak", now ? &now->peak_bytes : NULL,
			          base ? &base->peak_bytes : NULL);
			json_pair(w, "final", now ? &now->final_bytes : NULL,
			          base ? &base->final_bytes : NULL);
			cli_jw_end_object(w);
		}
	}
	cli_jw_end_array(w);
	struct totals tn, tb;
	sum_devices(v, &tn);
	sum_devices(b, &tb);
	json_pair(w, "leaked", &tn.leaked, &tb.leaked);
	json_pair(w, "allocs", &tn.allocs, &tb.allocs);
	json_pair(w, "alloc_bytes", &tn.alloc_bytes, &tb.alloc_bytes);
	json_pair(w, "duration", &tn.duration, &tb.duration);
	cli_jw_end_object(w);
}

int report_json_baseline(struct report_ctx *c, const struct report_base *base)
{
	struct cli_jw *w = c->w;
	const struct cgtrace_view *b = base->v;
	static const struct cgtrace_steps none = {.from = CGTRACE_UPDATES_NONE};
	const struct cgtrace_steps *st = b->steps ? b->steps : &none;
	cli_jw_key(w, "baseline");
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "trace", base->name);
	report_json_grid(w, b);
	cli_jw_key(w, "devices");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < b->n_devices; i++) {
		cli_jw_begin_object(w);
		report_json_device_figures(w, &b->devices[i]);
		report_json_series(w, b, &b->devices[i]);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
	cli_jw_key(w, "updates");
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "from", cli_updates_from_name(st->from));
	cli_jw_key_u64(w, "total", st->updates);
	int ret = report_json_update_marks(w, b, st);
	cli_jw_end_object(w);
	cli_jw_end_object(w);
	json_diff(w, c->v, b);
	return ret;
}

struct cgtrace_view *report_base_load(const char *path, const struct cgtrace_view_options *vo)
{
	/* Its line is drawn from the buckets alone: no allocation kept one by one, no stack. */
	struct cgtrace_view_options bo = *vo;
	bo.max_allocs = 1;
	return cli_view_load(path, &bo, CGTRACE_READ_SKIP_STACKS | CGTRACE_READ_PEAK_LARGEST);
}

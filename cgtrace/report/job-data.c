/* SPDX-License-Identifier: MIT */
/*
 * The data of a job's page (job-data.h): the job's figures as the
 * summary has them, the lanes' samples, each GPU's summed bytes. Times
 * of the job's block are on the job's axis; a lane's on its process's
 * own clock, which the page shifts by the process's start.
 */
#include "job-data.h"

#include <errno.h>
#include <stdlib.h>

#include "job-gpu-series.h"
#include "job-names.h"
#include "job-text.h"

/* cgtrace_view_options' defaults (include/cgtrace.h), which a job's pages share out. */
#define VIEW_BUCKETS 2000
#define VIEW_ALLOCS 500

void report_job_view_options(struct cgtrace_view_options *vo, size_t pages)
{
	if (!vo->buckets)
		vo->buckets = report_share(VIEW_BUCKETS, 200, pages);
	if (!vo->max_allocs)
		vo->max_allocs = report_share(VIEW_ALLOCS, 50, pages);
}

static void key_i64_or_null(struct cli_jw *w, const char *key, int64_t v)
{
	cli_jw_key(w, key);
	if (v < 0)
		cli_jw_null(w);
	else
		cli_jw_i64(w, v);
}

static void json_devices(struct cli_jw *w, const struct cgtrace_job_process *p)
{
	cli_jw_key(w, "devices");
	cli_jw_begin_array(w);
	for (size_t d = 0; d < p->n_devices; d++) {
		const struct cgtrace_job_device *x = &p->devices[d];
		cli_jw_begin_object(w);
		cli_jw_key_str(w, "device", x->device);
		cli_jw_key_str(w, "uuid", x->uuid);
		cli_jw_key_str(w, "name", x->name);
		cli_jw_key_u64(w, "peak", x->peak_bytes);
		cli_jw_key_u64(w, "peak_ns", x->peak_ns);
		cli_jw_key_u64(w, "final", x->final_bytes);
		cli_jw_key_u64(w, "leaked", x->leaked_bytes);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

/* A match in a baseline: its index there, null for none; nothing without a baseline. */
static void json_match(struct cli_jw *w, const long *match, size_t i)
{
	if (match)
		key_i64_or_null(w, "baseline", match[i]);
}

/* What the process table and a lane's title show of a process; its devices' figures. */
static void json_process(struct cli_jw *w, const struct cgtrace_job *j, size_t i, const long *match)
{
	const struct cgtrace_job_process *p = &j->processes[i];
	char buf[CLI_JOB_NAME_LEN];
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "path", p->path);
	cli_jw_key_str(w, "trace", report_trace_name(p->path));
	json_match(w, match, i);
	if (p->error) {
		cli_jw_key_str(w, "error", p->message);
		cli_jw_end_object(w);
		return;
	}
	const struct cgtrace_process *x = &p->process;
	cli_jw_key_str(w, "label", cli_job_label(buf, sizeof(buf), p));
	cli_jw_key_str(w, "who", cli_job_who_of(buf, sizeof(buf), p));
	cli_jw_key_str(w, "command", cli_job_command(buf, sizeof(buf), &p->process));
	const struct {
		const char *key;
		int64_t v;
	} ids[] = {{"pid", x->pid},
	           {"ppid", x->ppid},
	           {"forked_from", x->forked_from},
	           {"rank", x->rank},
	           {"world_size", x->world_size},
	           {"parent", p->parent}};
	for (size_t k = 0; k < sizeof(ids) / sizeof(*ids); k++)
		key_i64_or_null(w, ids[k].key, ids[k].v);
	cli_jw_key_str(w, "host", x->host);
	cli_jw_key_u64(w, "depth", p->depth);
	cli_jw_key_u64(w, "start_ns", p->start_ns);
	cli_jw_key_u64(w, "end_ns", p->end_ns);
	cli_jw_key_bool(w, "complete", p->complete);
	cli_jw_key_u64(w, "alloc_count", p->alloc_count);
	cli_jw_key_u64(w, "free_count", p->free_count);
	cli_jw_key_u64(w, "peak", p->peak_bytes);
	cli_jw_key_u64(w, "leaked", p->leaked_bytes);
	json_devices(w, p);
	cli_jw_end_object(w);
}

struct samples {
	uint64_t *t, *v;
	size_t n, cap;
};

static int on_sample(void *user, uint64_t t, uint64_t bytes)
{
	struct samples *s = user;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		uint64_t *nt = realloc(s->t, cap * sizeof(*nt));
		if (nt)
			s->t = nt;
		uint64_t *nv = nt ? realloc(s->v, cap * sizeof(*nv)) : NULL;
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	s->t[s->n] = t;
	s->v[s->n++] = bytes;
	return 0;
}

/* A GPU's summed bytes as two columns, t and v: its samples, so the page draws its exact peak. */
static int json_gpu_series(struct cli_jw *w, const struct cgtrace_job *j, size_t g)
{
	struct samples s = {0};
	uint64_t bucket_ns = 0;
	int ret = cli_job_gpu_series(j, g, REPORT_JOB_GPU_BUCKETS, on_sample, &s, &bucket_ns);
	if (ret == 0) {
		cli_jw_key_u64(w, "bucket_ns", bucket_ns);
		cli_jw_key(w, "t");
		cli_jw_u64s(w, s.t, s.n);
		cli_jw_key(w, "v");
		cli_jw_u64s(w, s.v, s.n);
	}
	free(s.t);
	free(s.v);
	return ret;
}

static int json_gpu(struct cli_jw *w, const struct cgtrace_job *j, size_t g, const long *match)
{
	const struct cgtrace_job_gpu *x = &j->gpus[g];
	char key[CLI_JOB_NAME_LEN], name[CLI_JOB_NAME_LEN];
	cli_job_gpu_names(x, key, sizeof(key), name, sizeof(name));
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "label", name);
	cli_jw_key_str(w, "key", key);
	json_match(w, match, g);
	cli_jw_key_str(w, "uuid", x->uuid);
	cli_jw_key_str(w, "host", x->host);
	cli_jw_key_str(w, "device", x->device);
	cli_jw_key_str(w, "name", x->name);
	cli_jw_key_u64(w, "total", x->total_bytes);
	cli_jw_key_u64(w, "processes", x->n_processes);
	cli_jw_key_u64(w, "peak", x->peak_bytes);
	cli_jw_key_u64(w, "peak_ns", x->peak_ns);
	cli_job_json_shares(w, x);
	int ret = json_gpu_series(w, j, g);
	cli_jw_end_object(w);
	return ret;
}

/* What each process's page holds, for the page to say. */
static void json_page(struct cli_jw *w, const struct cgtrace_view_options *vo,
                      const struct report_limits *lim)
{
	cli_jw_key(w, "page");
	cli_jw_begin_object(w);
	cli_jw_key_u64(w, "buckets", vo->buckets);
	cli_jw_key_u64(w, "allocs", vo->max_allocs);
#define REPORT_LIMIT_KEY(name, page, least) cli_jw_key_u64(w, #name, lim->name);
	REPORT_LIMITS(REPORT_LIMIT_KEY)
#undef REPORT_LIMIT_KEY
	cli_jw_end_object(w);
}

int report_job_json(struct cli_buf *b, const struct cgtrace_job *j, const size_t *order,
                    const struct cgtrace_view_options *vo, const struct report_limits *lim,
                    const struct report_job_base *base)
{
	struct cli_jw w;
	cli_jw_init(&w, b);
	cli_jw_begin_object(&w);
	report_json_head(&w, "cgprobe-job-report/1");
	report_json_colours(&w);
	cli_jw_key(&w, "job");
	cli_jw_begin_object(&w);
	cli_jw_key_u64(&w, "traces", j->n_processes);
	cli_jw_key_u64(&w, "errors", j->n_errors);
	cli_jw_key_u64(&w, "span_ns", j->span_ns);
	cli_jw_key_u64(&w, "zero_realtime_ns", j->zero_realtime_ns);
	cli_jw_key_u64(&w, "clock_error_ns", j->clock_error_ns);
	json_page(&w, vo, lim);
	if (base) {
		cli_jw_key(&w, "baseline");
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "name", base->name);
		cli_jw_key_u64(&w, "traces", base->traces);
		cli_jw_end_object(&w);
	}
	cli_jw_end_object(&w);
	cli_jw_key(&w, "processes");
	cli_jw_begin_array(&w);
	for (size_t i = 0; i < j->n_processes; i++)
		json_process(&w, j, i, base ? base->process : NULL);
	cli_jw_end_array(&w);
	cli_jw_key(&w, "order");
	cli_jw_begin_array(&w);
	for (size_t k = 0; k < j->n_processes; k++)
		cli_jw_u64(&w, order[k]);
	cli_jw_end_array(&w);
	cli_jw_key(&w, "hosts");
	cli_jw_begin_array(&w);
	for (size_t h = 0; h < j->n_hosts; h++) {
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "host", j->hosts[h].host);
		cli_jw_key_u64(&w, "processes", j->hosts[h].n_processes);
		cli_jw_key_u64(&w, "peak_sum", j->hosts[h].peak_sum);
		cli_jw_key_u64(&w, "leaked", j->hosts[h].leaked_bytes);
		cli_jw_end_object(&w);
	}
	cli_jw_end_array(&w);
	cli_jw_key(&w, "gpus");
	cli_jw_begin_array(&w);
	int ret = 0;
	for (size_t g = 0; ret == 0 && g < j->n_gpus; g++)
		ret = json_gpu(&w, j, g, base ? base->gpu : NULL);
	cli_jw_end_array(&w);
	cli_jw_end_object(&w);
	return ret < 0 ? ret : cli_jw_finish(&w);
}

/* A device's samples (report_json_series), named, with its peak. */
static void lane_device(struct cli_jw *w, const struct cgtrace_view *v,
                        const struct cgtrace_view_device *d)
{
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "name", d->device);
	cli_jw_key_u64(w, "peak", d->peak_bytes);
	cli_jw_key_u64(w, "peak_ns", d->peak_ns);
	report_json_series(w, v, d);
	cli_jw_end_object(w);
}

int report_lane_json(struct cli_buf *b, const struct cgtrace_view *v)
{
	struct cli_jw w;
	cli_jw_init(&w, b);
	cli_jw_begin_object(&w);
	cli_jw_key(&w, "devices");
	cli_jw_begin_array(&w);
	for (size_t d = 0; d < v->n_devices; d++)
		lane_device(&w, v, &v->devices[d]);
	cli_jw_end_array(&w);
	cli_jw_end_object(&w);
	return cli_jw_finish(&w);
}

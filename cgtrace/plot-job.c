/* SPDX-License-Identifier: MIT */
/*
 * The panels of a job's picture: a process's panel is its view's device
 * (--device D, else its device of highest peak) moved to the job's time
 * axis by its start; a physical GPU's panel is the bytes of every process
 * on it summed (cgtrace_job_gpu_each) on a grid of the job's span, each
 * bucket at its highest, so the highest point is the device's true peak.
 * A job of hundreds of ranks would make a picture of hundreds of panels
 * whose every panel is a line: the processes and GPUs of highest peak are
 * drawn, the others counted in the picture's note.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli-pool.h"
#include "job-load.h"
#include "job-text.h"
#include "plot.h"

/* A physical device's sum as a view of one device, for the panel code. */
struct gpu_view {
	size_t gpu; /* in the job */
	struct cgtrace_view v;
	struct cgtrace_view_device d;
	char totals[64];
	char name[160];
};

/* A process drawn: its view and its panel's words. */
struct drawn {
	size_t process; /* in the job */
	const char *device;
	uint64_t peak;
	struct cgtrace_view *v;
	char name[160];
};

struct plot_job {
	struct cgtrace_job *j;
	const struct plot_job_opts *o;
	struct drawn *procs;
	size_t n_procs;
	struct gpu_view *gpus;
	size_t n_gpus;
	char title[128], note[256];
	bool failed;
};

/* ---- the processes ---- */

static const struct cgtrace_job_device *device_of(const struct cgtrace_job_process *p,
						  const char *name)
{
	for (size_t d = 0; name && d < p->n_devices; d++)
		if (strcmp(p->devices[d].device, name) == 0)
			return &p->devices[d];
	return NULL;
}

static int by_peak(const void *a, const void *b)
{
	const struct drawn *x = a, *y = b;
	if (x->peak != y->peak)
		return x->peak > y->peak ? -1 : 1;
	return x->process < y->process ? -1 : x->process > y->process;
}

/* The processes with memory on their device: the `keep` of highest peak, then in tree order. */
static int choose(struct plot_job *pj, size_t keep, size_t *left, uint64_t *left_peak)
{
	const struct cgtrace_job *j = pj->j;
	size_t *place = calloc(j->n_processes ? j->n_processes : 1, sizeof(*place));
	pj->procs = calloc(j->n_processes ? j->n_processes : 1, sizeof(*pj->procs));
	if (!place || !pj->procs) {
		free(place);
		return -ENOMEM;
	}
	for (size_t i = 0; i < j->n_processes; i++) {
		const struct cgtrace_job_process *p = &j->processes[i];
		const char *name = pj->o->device ? pj->o->device : cli_job_device_shown(p);
		const struct cgtrace_job_device *d = p->error ? NULL : device_of(p, name);
		if (d && (d->alloc_count || d->free_count || d->peak_bytes))
			pj->procs[pj->n_procs++] = (struct drawn){i, d->device, d->peak_bytes, NULL, ""};
	}
	qsort(pj->procs, pj->n_procs, sizeof(*pj->procs), by_peak);
	*left = pj->n_procs > keep ? pj->n_procs - keep : 0;
	*left_peak = *left ? pj->procs[keep].peak : 0;
	if (*left)
		pj->n_procs = keep;
	/* Parents before their children, as summary lists them. */
	for (size_t t = 0; t < j->n_processes; t++)
		place[j->tree[t]] = t;
	for (size_t a = 1; a < pj->n_procs; a++)
		for (size_t b = a; b > 0 && place[pj->procs[b].process] <
					       place[pj->procs[b - 1].process]; b--) {
			struct drawn x = pj->procs[b];
			pj->procs[b] = pj->procs[b - 1];
			pj->procs[b - 1] = x;
		}
	free(place);
	return 0;
}

struct view_read {
	struct cgtrace_view *v;
	char line[2048];
};

static int view_read(void *user, size_t k, void **out)
{
	struct plot_job *pj = user;
	struct view_read *r = calloc(1, sizeof(*r));
	*out = r;
	if (!r)
		return CLI_FAIL;
	/* The allocations one by one are the report's: the plot draws the buckets only. */
	struct cgtrace_view_options vo = {.buckets = pj->o->buckets, .max_allocs = 1};
	const struct cgtrace_job_process *p = &pj->j->processes[pj->procs[k].process];
	return cgtrace_view_read_flags(p->path, &vo, CGTRACE_READ_SKIP_STACKS, &r->v, r->line,
				       sizeof(r->line)) < 0
		       ? CLI_FAIL
		       : CLI_OK;
}

static void view_fold(void *user, size_t k, void *state, int status)
{
	struct plot_job *pj = user;
	struct view_read *r = state;
	struct drawn *d = &pj->procs[k];
	if (!r)
		fprintf(stderr, "%s: %s\n", pj->j->processes[d->process].path, strerror(ENOMEM));
	else if (r->line[0])
		fprintf(stderr, "%s\n", r->line);
	pj->failed |= status != CLI_OK;
	if (r && status == CLI_OK)
		d->v = r->v;
	free(r);
}

/* ---- the physical devices ---- */

struct gpu_walk {
	struct cgtrace_view_device *d;
	uint64_t bucket_ns, cur;
	size_t n, filled; /* buckets; the first whose carried bytes are not counted yet */
};

/* Each bucket at the highest bytes in it, counting what was live when it began. */
static int gpu_moment(void *user, uint64_t t, uint64_t bytes)
{
	struct gpu_walk *w = user;
	size_t k = (size_t)(t / w->bucket_ns);
	if (k >= w->n)
		k = w->n - 1;
	for (; w->filled <= k; w->filled++)
		if (w->cur > w->d->buckets[w->filled].max_bytes)
			w->d->buckets[w->filled].max_bytes = w->cur;
	if (bytes > w->d->buckets[k].max_bytes)
		w->d->buckets[k].max_bytes = bytes;
	w->cur = bytes;
	return 0;
}

static int gpu_view(struct plot_job *pj, size_t g, struct gpu_view *out)
{
	const struct cgtrace_job *j = pj->j;
	const struct cgtrace_job_gpu *x = &j->gpus[g];
	size_t want = pj->o->buckets ? pj->o->buckets : 2000;
	uint64_t span = j->span_ns ? j->span_ns : 1;
	uint64_t bucket = (span + want - 1) / want;
	struct gpu_walk w = {.d = &out->d, .bucket_ns = bucket, .n = (size_t)(span / bucket) + 1};
	out->d = (struct cgtrace_view_device){
	    .device = x->device,
	    .capacity_bytes = x->total_bytes,
	    .peak_bytes = x->peak_bytes,
	    .peak_ns = x->peak_ns,
	    .buckets = calloc(w.n, sizeof(*out->d.buckets)),
	};
	if (!out->d.buckets)
		return -ENOMEM;
	out->gpu = g;
	out->v = (struct cgtrace_view){.bucket_ns = bucket, .n_buckets = w.n, .end_ns = span};
	int ret = cgtrace_job_gpu_each(j, g, gpu_moment, &w);
	for (; ret == 0 && w.filled < w.n; w.filled++)
		out->d.buckets[w.filled].max_bytes = w.cur;
	out->d.final_bytes = w.cur;
	snprintf(out->name, sizeof(out->name), "%s (%s %s)", x->uuid ? x->uuid : x->device,
		 x->host[0] ? x->host : "?", x->device);
	cli_job_processes(out->totals, x->n_processes);
	return ret;
}

static int by_gpu_peak(const void *a, const void *b)
{
	const struct cgtrace_job_gpu *x = *(const struct cgtrace_job_gpu *const *)a,
				     *y = *(const struct cgtrace_job_gpu *const *)b;
	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes > y->peak_bytes ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The `keep` GPUs of highest peak, in the job's order. */
static int gpus(struct plot_job *pj, size_t keep, size_t *left)
{
	const struct cgtrace_job *j = pj->j;
	const struct cgtrace_job_gpu **order = calloc(j->n_gpus ? j->n_gpus : 1, sizeof(*order));
	bool *kept = calloc(j->n_gpus ? j->n_gpus : 1, sizeof(*kept));
	pj->gpus = calloc(j->n_gpus ? j->n_gpus : 1, sizeof(*pj->gpus));
	int ret = order && kept && pj->gpus ? 0 : -ENOMEM;
	for (size_t g = 0; ret == 0 && g < j->n_gpus; g++)
		order[g] = &j->gpus[g];
	if (ret == 0)
		qsort(order, j->n_gpus, sizeof(*order), by_gpu_peak);
	for (size_t g = 0; ret == 0 && g < j->n_gpus && g < keep; g++)
		kept[order[g] - j->gpus] = true;
	*left = j->n_gpus > keep ? j->n_gpus - keep : 0;
	for (size_t g = 0; ret == 0 && g < j->n_gpus; g++)
		if (kept[g])
			ret = gpu_view(pj, g, &pj->gpus[pj->n_gpus++]);
	free(order);
	free(kept);
	return ret;
}

/* ---- the picture ---- */

static void words(struct plot_job *pj, size_t left, uint64_t left_peak, size_t gpus_left)
{
	char a[48], b[32];
	size_t read = pj->j->n_processes - pj->j->n_errors, at = 0;
	snprintf(pj->title, sizeof(pj->title), "Live bytes by category: a job of %s",
		 cli_job_processes(a, read));
	if (left)
		at += (size_t)snprintf(pj->note, sizeof(pj->note),
				       "%zu of %zu processes drawn, those of highest peak; %zu more, "
				       "each at most %s, not drawn",
				       pj->n_procs, pj->n_procs + left, left,
				       plot_bytes_text(b, left_peak));
	if (gpus_left && at < sizeof(pj->note))
		snprintf(pj->note + at, sizeof(pj->note) - at,
			 "%s%zu of %zu physical devices drawn, those of highest peak",
			 at ? "; " : "", pj->n_gpus, pj->n_gpus + gpus_left);
}

/* The panels: each process drawn, then each physical device. */
static int panels(struct plot *p, struct plot_job *pj)
{
	p->panels = calloc(pj->n_procs + pj->n_gpus + 1, sizeof(*p->panels));
	if (!p->panels)
		return -ENOMEM;
	for (size_t k = 0; k < pj->n_procs; k++) {
		struct drawn *d = &pj->procs[k];
		const struct cgtrace_job_process *jp = &pj->j->processes[d->process];
		const struct cgtrace_view_device *vd = NULL;
		for (size_t i = 0; d->v && i < d->v->n_devices; i++)
			if (strcmp(d->v->devices[i].device, d->device) == 0)
				vd = &d->v->devices[i];
		if (!vd || !d->v->n_buckets)
			continue;
		const struct cgtrace_job_device *jd = device_of(jp, d->device);
		char who[64];
		snprintf(d->name, sizeof(d->name), "%s %s",
			 cli_job_who(who, sizeof(who), &jp->process), d->device);
		p->panels[p->n_panels++] = (struct plot_panel){
		    .d = vd, .v = d->v, .shift = jp->start_ns, .name = d->name,
		    .info_name = jd ? jd->name : NULL, .process = &jp->process};
		for (size_t b = 0; b < d->v->n_buckets; b++)
			for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
				p->category_present[c] |= vd->buckets[b].max_by_category[c] > 0;
	}
	for (size_t g = 0; g < pj->n_gpus; g++) {
		struct gpu_view *x = &pj->gpus[g];
		const struct cgtrace_job_gpu *jg = &pj->j->gpus[x->gpu];
		p->panels[p->n_panels++] = (struct plot_panel){
		    .d = &x->d, .v = &x->v, .name = x->name, .totals = x->totals,
		    .info_name = jg->name, .gpu = jg};
	}
	return 0;
}

int plot_job_read(struct plot *p, struct plot_job **out, char *const *paths, size_t n,
		  const struct plot_job_opts *o, bool *failed)
{
	struct plot_job *pj = calloc(1, sizeof(*pj));
	*out = pj;
	if (!pj) {
		fprintf(stderr, "cgtrace plot: %s\n", strerror(ENOMEM));
		return CLI_FAIL;
	}
	pj->o = o;
	pj->j = cli_job_load(paths, n, o->jobs, CGTRACE_READ_SKIP_STACKS);
	if (!pj->j)
		return CLI_FAIL;
	/* The unreadable traces, said once each: the others are drawn. */
	pj->failed = cli_job_errors(pj->j) != CLI_OK;
	size_t left = 0, gpus_left = 0;
	uint64_t left_peak = 0;
	int ret = choose(pj, o->processes, &left, &left_peak);
	if (ret == 0) {
		static const struct cli_pool_ops ops = {view_read, view_fold};
		cli_pool_run(pj->n_procs, o->jobs, &ops, pj);
		ret = gpus(pj, o->processes, &gpus_left);
	}
	if (ret == 0)
		ret = panels(p, pj);
	*failed = pj->failed;
	if (ret < 0) {
		fprintf(stderr, "cgtrace plot: %s\n", strerror(-ret));
		return CLI_FAIL;
	}
	if (!p->n_panels) {
		fprintf(stderr, "cgtrace plot: no memory records%s%s to plot in the job\n",
			o->device ? " for device " : "", o->device ? o->device : "");
		return CLI_FAIL;
	}
	words(pj, left, left_peak, gpus_left);
	p->title = pj->title;
	p->note = pj->note[0] ? pj->note : NULL;
	p->t0 = 0;
	p->t1 = pj->j->span_ns ? pj->j->span_ns : 1;
	return CLI_OK;
}

void plot_job_free(struct plot_job *pj)
{
	if (!pj)
		return;
	for (size_t k = 0; k < pj->n_procs; k++)
		cgtrace_view_free(pj->procs[k].v);
	for (size_t g = 0; g < pj->n_gpus; g++)
		free(pj->gpus[g].d.buckets);
	free(pj->procs);
	free(pj->gpus);
	cgtrace_job_free(pj->j);
	free(pj);
}

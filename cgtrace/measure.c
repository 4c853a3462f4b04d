/* SPDX-License-Identifier: MIT */
/*
 * One side of a comparison measured (measure.h). A process's trace is
 * read once by cgtrace_steps_read, whose streamed document also answers
 * the memory report and the per-stack figures that top sums by site; the
 * figures are copied out and the document freed before the next trace,
 * so a side of many ranks holds one document per reading thread. A job
 * with devices other than the host is read a second time for its
 * physical GPUs' exact sums (cgtrace_job_read), which no one process has.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli-pool.h"
#include "job-load.h"
#include "job-text.h"
#include "measure.h"
#include "step-growth.h"

static char *dup_or_null(const char *s, bool *oom)
{
	if (!s)
		return NULL;
	char *c = strdup(s);
	*oom |= !c;
	return c;
}

static int dev_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cli_mdev *)a)->device, ((const struct cli_mdev *)b)->device);
}

static int site_cmp(const void *a, const void *b)
{
	const struct cli_msite *x = a, *y = b;
	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes > y->peak_bytes ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->device, y->device);
}

const struct cli_mdev *cli_mproc_dev(const struct cli_mproc *p, const char *device)
{
	for (size_t d = 0; d < p->n_devs; d++)
		if (strcmp(p->devs[d].device, device) == 0)
			return &p->devs[d];
	return NULL;
}

static struct cli_mdev *dev_of(struct cli_mproc *p, const char *device)
{
	return (struct cli_mdev *)cli_mproc_dev(p, device);
}

const struct cli_msite *cli_mproc_top_site(const struct cli_mproc *p, const char *device,
                                           size_t offset)
{
	const struct cli_msite *best = NULL;
	uint64_t most = 0, v;
	for (size_t i = 0; i < p->n_sites; i++) {
		const struct cli_msite *s = &p->sites[i];
		memcpy(&v, (const char *)s + offset, sizeof(v));
		if ((!device || strcmp(s->device, device) == 0) && v > most) {
			best = s;
			most = v;
		}
	}
	return best;
}

/* The devices of the memory report, their identities and the peak's categories. */
static int take_devices(struct cli_mproc *p, const struct cgtrace_doc *doc,
                        const struct cgtrace_memory_report *rep)
{
	bool oom = false;
	p->devs = calloc(rep->n_devices ? rep->n_devices : 1, sizeof(*p->devs));
	if (!p->devs)
		return -ENOMEM;
	for (size_t i = 0; i < rep->n_devices; i++) {
		const struct cgtrace_device_peak *d = &rep->by_device[i];
		/* A device known only from checkpoints has no peak of its own. */
		if (!d->alloc_count && !d->free_count)
			continue;
		struct cli_mdev *v = &p->devs[p->n_devs++];
		*v = (struct cli_mdev){
		    .device = dup_or_null(d->device, &oom),
		    .peak_bytes = d->peak_bytes,
		    .peak_ns = d->peak_timestamp_ns,
		    .alloc_count = d->alloc_count,
		    .free_count = d->free_count,
		    .final_bytes = d->final_bytes,
		    .when = rep->device_moments[i],
		};
		v->when.phase = dup_or_null(v->when.phase, &oom);
		if (strcmp(d->device, rep->peak_device) == 0) {
			v->has_categories = true;
			memcpy(v->categories, rep->peak_by_category, sizeof(v->categories));
		}
		for (size_t k = 0; k < cgtrace_doc_count(doc, CGTRACE_KIND_DEVICE_INFO); k++) {
			struct cgtrace_device_info info;
			cgtrace_doc_device_info(doc, k, &info);
			if (strcmp(info.device, d->device) == 0 && info.uuid && *info.uuid) {
				v->uuid = dup_or_null(info.uuid, &oom);
				break;
			}
		}
		p->alloc_count += d->alloc_count;
		p->free_count += d->free_count;
	}
	qsort(p->devs, p->n_devs, sizeof(*p->devs), dev_cmp);
	return oom ? -ENOMEM : 0;
}

/* A phase's name kept past the document: one copy per distinct name (a trace has a few). */
static const char *phase_copy(struct cli_mproc *p, const char *phase)
{
	for (size_t i = 0; i < p->n_phases; i++)
		if (strcmp(p->phases[i], phase) == 0)
			return p->phases[i];
	char **v = realloc(p->phases, (p->n_phases + 1) * sizeof(*v));
	if (!v)
		return NULL;
	p->phases = v;
	if (!(v[p->n_phases] = strdup(phase)))
		return NULL;
	return v[p->n_phases++];
}

/*
 * The steps kept, their document freed: the rows' phase names copied (the
 * rows are the caller's to read and point into the document), each
 * device's figures and trend taken where they are.
 */
static int take_steps(struct cli_mproc *p, struct cgtrace_steps *st)
{
	p->from = st->from;
	p->warmup = st->warmup;
	for (size_t r = 0; r < st->n_rows; r++)
		if (st->rows[r].phase && !(st->rows[r].phase = phase_copy(p, st->rows[r].phase)))
			return -ENOMEM;
	for (size_t d = 0; d < st->n_devices; d++) {
		struct cli_mdev *v = dev_of(p, st->devices[d]);
		if (!v)
			continue;
		v->trend = st->trends[d];
		v->figures = st->n_rows ? st->figures[d] : NULL;
	}
	p->rows = st->rows;
	p->n_rows = st->n_rows;
	return 0;
}

/* What a fork child inherited is its parent's to have leaked. */
static int add_leaked(void *user, const struct cgtrace_stack_stat *st)
{
	struct cli_mproc *p = user;
	struct cli_mdev *v = dev_of(p, st->device);
	if (v && !st->preexisting) {
		v->leaked_bytes += st->leaked_bytes;
		p->leaked_bytes += st->leaked_bytes;
	}
	return 0;
}

/*
 * The sites by name and device (those with bytes at the peak, or all);
 * leaked bytes summed per device from the stacks' figures, none resolved.
 */
static int take_sites(struct cli_mproc *p, struct cli_sites *s, bool all)
{
	struct cli_site_row *rows;
	size_t n;
	char name[600];
	int r = cgtrace_stack_stats_each(s->doc, add_leaked, p);
	if (r < 0 && r != -ENODATA)
		return r;
	r = cli_site_rows(s, NULL, false, all ? CLI_BY_COUNT : CLI_BY_PEAK, &rows, &n);
	if (r < 0)
		return r;
	p->sites = calloc(n ? n : 1, sizeof(*p->sites));
	if (!p->sites) {
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct cli_mdev *v = dev_of(p, rows[i].device);
		if (!v)
			continue;
		struct cli_msite *m = &p->sites[p->n_sites];
		*m = (struct cli_msite){
		    .name = strdup(cli_frame_name(name, sizeof(name), rows[i].site)),
		    .device = v->device,
		    .peak_bytes = rows[i].sum.peak_bytes,
		    .leaked_bytes = rows[i].sum.leaked_bytes,
		    .count = rows[i].sum.count,
		};
		if (!m->name) {
			free(rows);
			return -ENOMEM;
		}
		p->n_sites++;
	}
	free(rows);
	qsort(p->sites, p->n_sites, sizeof(*p->sites), site_cmp);
	return 0;
}

/* "run (train.py:28)" -> "run (train.py)": a ":digits" right before the closing parenthesis goes. */
static void strip_line(char *name)
{
	size_t n = strlen(name);
	if (n < 3 || name[n - 1] != ')')
		return;
	size_t i = n - 1;
	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i < n - 1 && i > 0 && name[i - 1] == ':')
		memmove(name + i - 1, name + n - 1, 2);
}

/* The sites of one function and file (and device) made one, their figures summed. */
static void sites_by_function(struct cli_mproc *p)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n_sites; i++)
		strip_line(p->sites[i].name);
	qsort(p->sites, p->n_sites, sizeof(*p->sites), cli_msite_key_cmp);
	for (size_t i = 0; i < p->n_sites; i++) {
		struct cli_msite *m = &p->sites[i];
		if (k && cli_msite_key_cmp(&p->sites[k - 1], m) == 0) {
			struct cli_msite *t = &p->sites[k - 1];
			t->peak_bytes += m->peak_bytes;
			t->leaked_bytes += m->leaked_bytes;
			t->count += m->count;
			free(m->name);
			continue;
		}
		p->sites[k++] = *m;
	}
	p->n_sites = k;
	qsort(p->sites, p->n_sites, sizeof(*p->sites), site_cmp);
}

/* Each device's site that grew in most updates, then by bytes (cgtrace steps --growth's first). */
static int take_growth(struct cli_mproc *p, struct cli_sites *s, const struct cgtrace_steps *st)
{
	struct step_growth_row *g;
	size_t n;
	bool oom = false;
	int r = step_growth_rows(s, st, NULL, &g, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct cli_mdev *v = dev_of(p, g[i].device);
		if (v && !v->growth_site) {
			v->growth_site = dup_or_null(g[i].name, &oom);
			v->growth_per_update = step_growth_per_update(&g[i]);
		}
	}
	step_growth_free(g, n);
	return oom ? -ENOMEM : 0;
}

static int take_process(struct cli_mproc *p, const struct cgtrace_doc *doc)
{
	struct cgtrace_process pr;
	bool oom = false;
	if (cgtrace_doc_process(doc, &pr) < 0)
		pr = (struct cgtrace_process){
		    .pid = -1, .rank = -1, .forked_from = -1, .executable = "", .cmdline = ""};
	p->pid = pr.pid;
	p->rank = pr.forked_from < 0 ? pr.rank : -1;
	p->executable = dup_or_null(pr.executable, &oom);
	cli_job_who(p->who, sizeof(p->who), &pr);
	cli_job_name(p->name, sizeof(p->name), &pr);
	return oom ? -ENOMEM : 0;
}

/* Process p read from path: CLI_OK, or CLI_FAIL with its line printed. */
static int measure_one(struct cli_mproc *p, const struct cli_measure_opts *o)
{
	const struct cgtrace_steps_options so = {
	    .warmup = o->warmup, .phases = true, .growth = o->growth};
	struct cgtrace_steps *st;
	struct cgtrace_memory_report *rep = NULL;
	struct cli_sites s = {0};
	char err[2048];
	if (cgtrace_steps_read(p->path, NULL, 0, &so, &st, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return CLI_FAIL;
	}
	if (err[0])
		fprintf(stderr, "%s\n", err);
	/* The report's breakdown lists the allocations at the peak: none is needed. */
	int r = cgtrace_memory_analyze_largest(st->doc, 1, &rep);
	if (r == 0)
		r = take_process(p, st->doc);
	if (r == 0)
		r = take_devices(p, st->doc, rep);
	if (r == 0)
		r = take_steps(p, st);
	/* cli_sites_attach prints its own error. */
	bool sites = r == 0 && cli_sites_attach(&s, st->doc, p->path) == CLI_OK;
	if (sites) {
		r = take_sites(p, &s, o->all_sites);
		if (r == 0 && o->by_function)
			sites_by_function(p);
		if (r == 0 && o->growth)
			r = take_growth(p, &s, st);
		cli_sites_close(&s);
	}
	cgtrace_memory_report_free(rep);
	/* The figures stay; the document (stacks, strings, the stream) goes now. */
	cgtrace_doc_free(st->doc);
	st->doc = NULL;
	p->steps = st;
	if (r == 0 && !sites)
		return CLI_FAIL;
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", cli_path_name(p->path), strerror(-r));
		return CLI_FAIL;
	}
	p->read = true;
	return CLI_OK;
}

struct pool_user {
	struct cli_measure *m;
	const struct cli_measure_opts *o;
};

/* Each thread fills its own process: nothing is shared but what the library locks. */
static int pool_read(void *user, size_t i, void **state)
{
	struct pool_user *u = user;
	(void)state;
	return measure_one(&u->m->procs[i], u->o);
}

static void pool_fold(void *user, size_t i, void *state, int status)
{
	(void)user, (void)i, (void)state, (void)status;
}

/* One trace's physical devices: its devices with an identity, each its own sum. */
static int gpus_of_trace(struct cli_measure *m)
{
	const struct cli_mproc *p = &m->procs[0];
	m->gpus = calloc(p->n_devs ? p->n_devs : 1, sizeof(*m->gpus));
	if (!m->gpus)
		return -ENOMEM;
	for (size_t d = 0; d < p->n_devs; d++) {
		const struct cli_mdev *v = &p->devs[d];
		if (!v->uuid)
			continue;
		struct cli_mgpu *g = &m->gpus[m->n_gpus];
		size_t len = strlen(v->uuid) + 5;
		*g = (struct cli_mgpu){.key = malloc(len),
		                       .peak_bytes = v->peak_bytes,
		                       .peak_ns = v->peak_ns,
		                       .n_processes = 1,
		                       .top_process = 0,
		                       .top_device = strdup(v->device)};
		m->n_gpus++;
		if (!g->key || !g->top_device)
			return -ENOMEM;
		snprintf(g->key, len, "gpu:%s", v->uuid);
	}
	return 0;
}

/* A job's physical devices, as summary sums them; only when a process has another device. */
static int gpus_of_job(struct cli_measure *m, char *const *paths, const struct cli_measure_opts *o)
{
	bool devices = false;
	for (size_t i = 0; i < m->n_procs; i++)
		for (size_t d = 0; d < m->procs[i].n_devs; d++)
			devices |= strcmp(m->procs[i].devs[d].device, "cpu") != 0;
	if (!devices)
		return 0;
	struct cgtrace_job *j = cli_job_load(paths, m->n_procs, o->jobs, CGTRACE_READ_SKIP_STACKS);
	if (!j)
		return -ENOMEM;
	/* Its read errors are the first read's, printed then. */
	int r = 0;
	m->gpus = calloc(j->n_gpus ? j->n_gpus : 1, sizeof(*m->gpus));
	if (!m->gpus)
		r = -ENOMEM;
	for (size_t i = 0; r == 0 && i < j->n_gpus; i++) {
		const struct cgtrace_job_gpu *x = &j->gpus[i];
		char key[512];
		if (x->uuid)
			snprintf(key, sizeof(key), "gpu:%s", x->uuid);
		else
			snprintf(key, sizeof(key), "gpu:%s/%s", x->host ? x->host : "",
			         x->device ? x->device : "");
		struct cli_mgpu *g = &m->gpus[m->n_gpus++];
		*g = (struct cli_mgpu){.key = strdup(key),
		                       .peak_bytes = x->peak_bytes,
		                       .peak_ns = x->peak_ns,
		                       .total_bytes = x->total_bytes,
		                       .n_processes = x->n_processes,
		                       .top_process = -1};
		if (x->n_shares) {
			g->top_process = (long)x->shares[0].process;
			g->top_device = strdup(x->shares[0].device);
		}
		if (!g->key || (x->n_shares && !g->top_device))
			r = -ENOMEM;
	}
	cgtrace_job_free(j);
	return r;
}

int cli_measure_read(struct cli_measure *m, const char *const *args, size_t n_args,
                     const struct cli_measure_opts *o)
{
	char **paths, err[512];
	size_t n;
	struct stat st;
	*m = (struct cli_measure){0};
	if (cgtrace_job_paths(args, n_args, &paths, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return CLI_FAIL;
	}
	m->job = o->job || n > 1 || (n_args == 1 && stat(args[0], &st) == 0 && S_ISDIR(st.st_mode));
	m->procs = calloc(n, sizeof(*m->procs));
	if (!m->procs) {
		free(paths);
		fprintf(stderr, "cgtrace: out of memory\n");
		return -ENOMEM;
	}
	m->n_procs = n;
	int r = 0;
	/* The paths are one allocation with their array: each process keeps a copy. */
	for (size_t i = 0; i < n; i++) {
		m->procs[i] = (struct cli_mproc){.path = strdup(paths[i]), .pid = -1, .rank = -1};
		if (!m->procs[i].path)
			r = -ENOMEM;
	}
	struct pool_user u = {m, o};
	const struct cli_pool_ops ops = {pool_read, pool_fold};
	if (r == 0)
		cli_pool_run(n, o->jobs, &ops, &u);
	for (size_t i = 0; i < n; i++)
		m->n_unread += !m->procs[i].read;
	if (r == 0)
		r = m->job ? gpus_of_job(m, paths, o) : m->procs[0].read ? gpus_of_trace(m) : 0;
	free(paths);
	if (r < 0) {
		fprintf(stderr, "cgtrace: out of memory\n");
		return r;
	}
	return m->n_unread ? CLI_FAIL : CLI_OK;
}

void cli_measure_free(struct cli_measure *m)
{
	for (size_t i = 0; i < m->n_procs; i++) {
		struct cli_mproc *p = &m->procs[i];
		for (size_t d = 0; d < p->n_devs; d++) {
			free(p->devs[d].device);
			free(p->devs[d].uuid);
			free((char *)p->devs[d].when.phase);
			free(p->devs[d].growth_site);
		}
		cgtrace_steps_free(p->steps);
		for (size_t k = 0; k < p->n_phases; k++)
			free(p->phases[k]);
		free(p->phases);
		for (size_t s = 0; s < p->n_sites; s++)
			free(p->sites[s].name);
		free(p->devs);
		free(p->sites);
		free(p->executable);
		free(p->path);
	}
	for (size_t g = 0; g < m->n_gpus; g++) {
		free(m->gpus[g].key);
		free(m->gpus[g].top_device);
	}
	free(m->procs);
	free(m->gpus);
	*m = (struct cli_measure){0};
}

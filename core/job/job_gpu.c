/* SPDX-License-Identifier: MIT */
/*
 * The physical devices of a job: every process's live bytes on the same
 * device (by UUID) summed on the job's time axis. Each process's series
 * holds a point per moment its bytes changed, so the sum is exact: the
 * points of all of a device's processes in time order, the sum taken
 * after each moment's points, its highest the device's peak.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

#include "export.h"

#define member cg_job_member

/* A member's next moment, on the job's axis, in the merge's heap. */
struct head {
	uint64_t t;
	uint32_t member;
};

static bool before(const struct head *a, const struct head *b)
{
	return a->t < b->t || (a->t == b->t && a->member < b->member);
}

static void sift_down(struct head *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct head x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

static const struct cgtrace_job_device *dev_of(const struct cgtrace_job *j, const struct member *m)
{
	return &j->processes[m->proc].devices[m->device];
}

static bool same_gpu(const struct cgtrace_job *j, const struct member *a, const struct member *b)
{
	const struct cgtrace_job_device *x = dev_of(j, a), *y = dev_of(j, b);
	if (x->uuid || y->uuid)
		return x->uuid && y->uuid && strcmp(x->uuid, y->uuid) == 0;
	return strcmp(x->device, y->device) == 0 &&
	       strcmp(j->processes[a->proc].process.host, j->processes[b->proc].process.host) == 0;
}

static int by_share(const void *a, const void *b)
{
	const struct cgtrace_job_share *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->process < y->process ? -1 : x->process > y->process;
}

/*
 * The sum over members[0..n): fn after each moment, with the sum and each
 * member's bytes then; its non-zero return stops the walk.
 */
static int merge(struct cg_job *jj, const struct member *m, size_t n,
		 int (*fn)(void *user, uint64_t t, uint64_t sum, const uint64_t *cur), void *user)
{
	struct cgtrace_job *j = &jj->pub;
	struct cg_series_cursor *c = calloc(n ? n : 1, sizeof(*c));
	struct head *h = calloc(n ? n : 1, sizeof(*h));
	uint64_t *cur = calloc(n ? n : 1, sizeof(*cur)), *start = calloc(n ? n : 1, sizeof(*start));
	bool *child = calloc(n ? n : 1, sizeof(*child));
	int ret = c && h && cur && start && child ? 0 : -ENOMEM;
	size_t live = 0; /* heads in the heap */
	for (size_t k = 0; ret == 0 && k < n; k++) {
		const struct cgtrace_job_process *jp = &j->processes[m[k].proc];
		start[k] = jp->start_ns;
		/* A fork child's inherited blocks are its parent's, counted there. */
		child[k] = jp->process.forked_from >= 0;
		ret = cg_series_begin(
		    CG_VEC_AT(&jj->procs[m[k].proc].series, struct cg_job_series, m[k].series), &c[k]);
		if (ret == 0 && cg_series_next(&c[k]))
			h[live++] = (struct head){start[k] + c[k].t, (uint32_t)k};
	}
	for (size_t i = live / 2; ret == 0 && i-- > 0;)
		sift_down(h, live, i);
	uint64_t sum = 0;
	while (ret == 0 && live) {
		uint64_t t = h[0].t;
		/* Every member's points of this moment, then the sum. */
		while (live && h[0].t == t) {
			size_t k = h[0].member;
			uint64_t v = c[k].live - (child[k] ? c[k].pre : 0);
			sum += v - cur[k];
			cur[k] = v;
			if (cg_series_next(&c[k]))
				h[0].t = start[k] + c[k].t;
			else
				h[0] = h[--live];
			sift_down(h, live, 0);
		}
		ret = fn(user, t, sum, cur);
	}
	for (size_t k = 0; c && k < n; k++)
		cg_series_end(&c[k]);
	free(c);
	free(h);
	free(cur);
	free(start);
	free(child);
	return ret;
}

struct peak {
	struct cgtrace_job_gpu *g;
	uint64_t *at_peak;
	size_t n;
};

static int on_moment(void *user, uint64_t t, uint64_t sum, const uint64_t *cur)
{
	struct peak *p = user;
	if (sum > p->g->peak_bytes) {
		p->g->peak_bytes = sum;
		p->g->peak_ns = t;
		memcpy(p->at_peak, cur, p->n * sizeof(*cur));
	}
	return 0;
}

/* The sum's peak and each member's share then. */
static int sum_one(struct cg_job *jj, const struct member *m, size_t n, struct cgtrace_job_gpu *g)
{
	struct cgtrace_job *j = &jj->pub;
	struct peak pk = {g, calloc(n ? n : 1, sizeof(uint64_t)), n};
	int ret = pk.at_peak ? merge(jj, m, n, on_moment, &pk) : -ENOMEM;
	if (ret == 0)
		g->shares = cg_arena_alloc(&jj->arena, (n ? n : 1) * sizeof(*g->shares));
	for (size_t k = 0; g->shares && k < n; k++)
		if (pk.at_peak[k])
			g->shares[g->n_shares++] = (struct cgtrace_job_share){
			    m[k].proc, dev_of(j, &m[k])->device, pk.at_peak[k]};
	if (g->shares)
		qsort(g->shares, g->n_shares, sizeof(*g->shares), by_share);
	free(pk.at_peak);
	return ret < 0 ? ret : g->shares ? 0 : -ENOMEM;
}

struct walk {
	int (*fn)(void *user, uint64_t t, uint64_t bytes);
	void *user;
};

static int on_walk(void *user, uint64_t t, uint64_t sum, const uint64_t *cur)
{
	const struct walk *w = user;
	(void)cur;
	return w->fn(w->user, t, sum);
}

CG_EXPORT int cgtrace_job_device_each(const struct cgtrace_job *pub, size_t proc, size_t device,
				      int (*fn)(void *user, uint64_t t, uint64_t bytes), void *user)
{
	struct cg_job *jj = (struct cg_job *)pub;
	if (proc >= pub->n_processes || device >= pub->processes[proc].n_devices)
		return -EINVAL;
	const struct cg_job_proc *p = &jj->procs[proc];
	for (size_t s = 0; s < p->series.len; s++)
		if (CG_VEC_AT(&p->series, struct cg_job_series, s)->device == device) {
			const struct member m = {proc, device, s};
			struct walk w = {fn, user};
			return merge(jj, &m, 1, on_walk, &w);
		}
	return -ENODATA;
}

CG_EXPORT int cgtrace_job_gpu_each(const struct cgtrace_job *pub, size_t gpu,
				   int (*fn)(void *user, uint64_t t, uint64_t bytes), void *user)
{
	struct cg_job *jj = (struct cg_job *)pub;
	if (gpu >= pub->n_gpus)
		return -EINVAL;
	struct walk w = {fn, user};
	return merge(jj, jj->gpu_members[gpu], jj->gpu_n[gpu], on_walk, &w);
}

static void describe(const struct cgtrace_job *j, const struct member *m, size_t n,
		     struct cgtrace_job_gpu *g)
{
	const struct cgtrace_job_device *d = dev_of(j, &m[0]);
	*g = (struct cgtrace_job_gpu){
	    .uuid = d->uuid,
	    .host = j->processes[m[0].proc].process.host,
	    .device = d->device,
	    .by_name = !d->uuid,
	};
	size_t procs = 0;
	for (size_t k = 0; k < n; k++) {
		const struct cgtrace_job_device *x = dev_of(j, &m[k]);
		if (!g->name && x->name)
			g->name = x->name;
		if (x->capacity_bytes > g->total_bytes)
			g->total_bytes = x->capacity_bytes;
		bool seen = false;
		for (size_t q = 0; q < k && !seen; q++)
			seen = m[q].proc == m[k].proc;
		procs += !seen;
	}
	g->n_processes = procs;
}

int cg_job_gpus(struct cg_job *jj)
{
	struct cgtrace_job *j = &jj->pub;
	size_t n = 0;
	for (size_t i = 0; i < j->n_processes; i++)
		n += j->processes[i].error ? 0 : jj->procs[i].series.len;
	struct member *all = malloc((n ? n : 1) * sizeof(*all));
	struct member *grp = malloc((n ? n : 1) * sizeof(*grp));
	bool *taken = calloc(n ? n : 1, sizeof(*taken));
	int ret = all && grp && taken ? 0 : -ENOMEM;
	n = 0;
	for (size_t t = 0; ret == 0 && t < j->n_processes; t++) {
		size_t i = j->tree[t];
		for (size_t s = 0; !j->processes[i].error && s < jj->procs[i].series.len; s++) {
			size_t d = CG_VEC_AT(&jj->procs[i].series, struct cg_job_series, s)->device;
			if (d < j->processes[i].n_devices)
				all[n++] = (struct member){i, d, s};
		}
	}
	if (ret == 0 && n) {
		j->gpus = cg_arena_alloc(&jj->arena, n * sizeof(*j->gpus));
		jj->gpu_members = cg_arena_alloc(&jj->arena, n * sizeof(*jj->gpu_members));
		jj->gpu_n = cg_arena_alloc(&jj->arena, n * sizeof(*jj->gpu_n));
		if (!j->gpus || !jj->gpu_members || !jj->gpu_n)
			ret = -ENOMEM;
	}
	for (size_t a = 0; ret == 0 && a < n; a++) {
		if (taken[a])
			continue;
		size_t k = 0;
		for (size_t b = a; b < n; b++)
			if (!taken[b] && same_gpu(j, &all[a], &all[b])) {
				taken[b] = true;
				grp[k++] = all[b];
			}
		jj->gpu_members[j->n_gpus] = cg_arena_alloc(&jj->arena, k * sizeof(*grp));
		if (!jj->gpu_members[j->n_gpus]) {
			ret = -ENOMEM;
			break;
		}
		memcpy(jj->gpu_members[j->n_gpus], grp, k * sizeof(*grp));
		jj->gpu_n[j->n_gpus] = k;
		struct cgtrace_job_gpu *g = &j->gpus[j->n_gpus++];
		describe(j, grp, k, g);
		ret = sum_one(jj, grp, k, g);
	}
	free(all);
	free(grp);
	free(taken);
	return ret;
}

/* SPDX-License-Identifier: MIT */
/*
 * A job read (cgtrace_job_read): its traces read by a few threads, each
 * taking the next trace as it finishes one, then placed and summed.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "export.h"
#include "job.h"
#include "worker.h"

struct pool {
	struct cg_job *j;
	const struct cgtrace_job_options *o;
	atomic_size_t next;
	pthread_mutex_t warn_lock; /* the caller's warn callback, one line at a time */
	struct cgtrace_job_options locked;
};

static void warn_locked(void *user, const char *line)
{
	struct pool *p = user;
	pthread_mutex_lock(&p->warn_lock);
	p->o->warn(p->o->user, line);
	pthread_mutex_unlock(&p->warn_lock);
}

static void *work(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->j->pub.n_processes)
			return NULL;
		cg_job_read_one(p->j, i, &p->locked);
	}
}

CG_EXPORT void cgtrace_job_free(struct cgtrace_job *pub)
{
	if (!pub)
		return;
	struct cg_job *j = (struct cg_job *)pub;
	for (size_t i = 0; j->procs && i < pub->n_processes; i++) {
		struct cg_job_proc *p = &j->procs[i];
		for (size_t k = 0; k < p->series.len; k++)
			cg_series_free(CG_VEC_AT(&p->series, struct cg_job_series, k));
		cg_vec_free(&p->series, sizeof(struct cg_job_series));
		cg_vec_free(&p->devs, sizeof(struct cg_job_dev));
		cg_vec_free(&p->pre_entry, sizeof(uint64_t));
		cg_arena_fini(&p->arena);
	}
	free(j->procs);
	free(pub->processes);
	free(pub->tree);
	cg_arena_fini(&j->arena);
	free(j);
}

CG_EXPORT int cgtrace_job_read(const char *const *paths, size_t n,
			       const struct cgtrace_job_options *opts, struct cgtrace_job **out)
{
	static const struct cgtrace_job_options none = {0};
	const struct cgtrace_job_options *o = opts ? opts : &none;
	*out = NULL;
	if (n == 0)
		return -EINVAL;
	struct cg_job *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	cg_arena_init(&j->arena);
	j->pub.n_processes = n;
	j->pub.processes = calloc(n, sizeof(*j->pub.processes));
	j->procs = calloc(n, sizeof(*j->procs));
	if (!j->pub.processes || !j->procs) {
		cgtrace_job_free(&j->pub);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		cg_arena_init(&j->procs[i].arena);
		j->pub.processes[i].path = cg_arena_strdup(&j->procs[i].arena, paths[i]);
		j->pub.processes[i].parent = -1;
		if (!j->pub.processes[i].path) {
			cgtrace_job_free(&j->pub);
			return -ENOMEM;
		}
	}

	struct pool p = {.j = j, .o = o, .locked = *o};
	atomic_init(&p.next, 0);
	pthread_mutex_init(&p.warn_lock, NULL);
	if (o->warn) {
		p.locked.warn = warn_locked;
		p.locked.user = &p;
	}
	size_t threads = o->jobs > 1 ? o->jobs : 1;
	threads = threads > n ? n : threads;
	struct cg_thread *t = calloc(threads, sizeof(*t));
	/* This thread reads too; the others are helpers, none if they cannot be made. */
	for (size_t k = 1; t && k < threads; k++)
		cg_thread_start(&t[k], work, &p);
	work(&p);
	for (size_t k = 1; t && k < threads; k++)
		cg_thread_join(&t[k]);
	free(t);
	pthread_mutex_destroy(&p.warn_lock);

	for (size_t i = 0; i < n; i++) {
		j->pub.n_errors += j->pub.processes[i].error != 0;
		if (j->pub.processes[i].error == -ENOMEM) {
			cgtrace_job_free(&j->pub);
			return -ENOMEM;
		}
	}
	int ret = cg_job_place(j);
	if (ret == 0)
		ret = cg_job_gpus(j);
	if (ret < 0) {
		cgtrace_job_free(&j->pub);
		return ret;
	}
	*out = &j->pub;
	return 0;
}

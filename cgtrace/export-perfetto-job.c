/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto export of a job (docs/perfetto.md, "A job"): each process
 * is its own view, as one trace's file holds it, placed as a process of
 * the file and shifted onto the job's time axis; each physical GPU is a
 * process with one counter, every process's bytes on it summed. The
 * views are read one at a time and written as they come, so the memory
 * is the job's figures and one view, and the size each view's own bound.
 */
#include "export-perfetto-job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export-perfetto.h"
#include "job-gpu-series.h"
#include "job-names.h"

/*
 * Above the pseudo ids a view uses (CLI_PERFETTO_PSEUDO_BASE and the few
 * after it): the processes whose pid is not theirs alone, then the GPUs.
 */
#define JOB_PID(i) ((CLI_PERFETTO_PSEUDO_BASE << 1) + (uint64_t)(i))
#define GPU_PID(g) ((CLI_PERFETTO_PSEUDO_BASE << 2) + (uint64_t)(g))

struct pid_of {
	int64_t pid;
	size_t index;
};

static int by_pid(const void *a, const void *b)
{
	const struct pid_of *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Each process's pid in the file: its own where no other process of the
 * job has it (two machines, or a pid reused), else one the job assigns.
 */
static int perfetto_pids(const struct cgtrace_job *j, uint64_t *out)
{
	size_t n = j->n_processes;
	struct pid_of *p = malloc((n ? n : 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		p[i] = (struct pid_of){j->processes[i].error ? -1 : j->processes[i].process.pid, i};
	qsort(p, n, sizeof(*p), by_pid);
	for (size_t k = 0; k < n; k++) {
		bool alone =
		    (!k || p[k - 1].pid != p[k].pid) && (k + 1 == n || p[k + 1].pid != p[k].pid);
		bool fits = p[k].pid > 0 && (uint64_t)p[k].pid < CLI_PERFETTO_PSEUDO_BASE;
		out[p[k].index] = alone && fits ? (uint64_t)p[k].pid : JOB_PID(p[k].index);
	}
	free(p);
	return 0;
}

/* What the metadata says of a process, written as its events are (the view goes after). */
static char *process_meta(const struct cgtrace_job_process *p, uint64_t pid, const char *name,
                          const struct cgtrace_view *v, const struct perfetto_kept *k)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key_str(&w, "path", p->path);
	cli_jw_key_str(&w, "name", name);
	cli_jw_key(&w, "pid");
	if (p->process.pid >= 0)
		cli_jw_i64(&w, p->process.pid);
	else
		cli_jw_null(&w);
	cli_jw_key_u64(&w, "perfetto_pid", pid);
	cli_jw_key(&w, "rank");
	if (p->process.rank >= 0)
		cli_jw_i64(&w, p->process.rank);
	else
		cli_jw_null(&w);
	cli_jw_key_u64(&w, "start_ns", p->start_ns);
	cli_jw_key_u64(&w, "end_ns", p->end_ns);
	perfetto_view_meta(&w, v, k);
	cli_jw_end_object(&w);
	cli_buf_putc(&b, '\0');
	if (cli_jw_finish(&w) < 0 || b.err) {
		cli_buf_fini(&b);
		return NULL;
	}
	return b.p;
}

struct job_file {
	struct perfetto_out o;
	const struct cgtrace_job *j;
	size_t buckets, max_spans;
	uint64_t *pids;
	char **metas;    /* per process: its metadata object, NULL when it has none */
	size_t n_unread; /* processes whose trace or view could not be read */
};

static int one_process(struct job_file *f, size_t i, uint64_t sort_index)
{
	const struct cgtrace_job_process *p = &f->j->processes[i];
	if (p->error) {
		fprintf(stderr, "%s\n", p->message);
		f->n_unread++;
		return 0;
	}
	/* The view's reads say their own warnings (the job's read kept quiet). */
	struct cgtrace_view_options vo = {.buckets = f->buckets};
	struct cgtrace_view *v = cli_view_load(p->path, &vo, CGTRACE_READ_SKIP_STACKS);
	if (!v) {
		f->n_unread++;
		return 0;
	}
	char name[CLI_JOB_NAME_LEN];
	cli_job_label(name, sizeof(name), p);
	const struct perfetto_place pl = {
	    .pid = f->pids[i], .sort_index = sort_index, .name = name, .in_job = true};
	struct perfetto_kept kept;
	f->o.shift_ns = p->start_ns;
	int ret = perfetto_view_events(&f->o, v, &pl, f->max_spans, &kept);
	f->o.shift_ns = 0;
	if (ret == 0) {
		f->metas[i] = process_meta(p, f->pids[i], name, v, &kept);
		ret = f->metas[i] ? 0 : -ENOMEM;
	}
	cgtrace_view_free(v);
	return ret;
}

struct gpu_counter {
	struct perfetto_out *o;
	uint64_t pid;
	const char *name;
};

static int gpu_sample(void *user, uint64_t t, uint64_t bytes)
{
	struct gpu_counter *c = user;
	perfetto_event(c->o, 'C', c->pid, c->pid, t, c->name);
	perfetto_args_begin(&c->o->w);
	cli_jw_key_u64(&c->o->w, "bytes", bytes);
	perfetto_args_end(&c->o->w);
	return 0;
}

/* The peak of the sum, and each process's part of it then. */
static void gpu_peak(struct job_file *f, const struct cgtrace_job_gpu *g, uint64_t pid,
                     const char *key)
{
	struct cli_jw *w = &f->o.w;
	char name[CLI_JOB_NAME_LEN + 16], h[32];
	snprintf(name, sizeof(name), "%s peak", key);
	perfetto_instant(&f->o, pid, g->peak_ns, name, "p");
	perfetto_args_begin(w);
	cli_jw_key_u64(w, "bytes", g->peak_bytes);
	cli_jw_key_str(w, "live", cli_bytes(h, g->peak_bytes, false));
	cli_jw_key(w, "shares");
	cli_jw_begin_array(w);
	for (size_t s = 0; s < g->n_shares; s++) {
		cli_jw_begin_object(w);
		cli_jw_key_str(
		    w, "process",
		    cli_job_label(name, sizeof(name), &f->j->processes[g->shares[s].process]));
		cli_jw_key_str(w, "device", g->shares[s].device);
		cli_jw_key_u64(w, "bytes", g->shares[s].bytes);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
	perfetto_args_end(w);
}

static int one_gpu(struct job_file *f, size_t g, uint64_t *bucket_ns)
{
	const struct cgtrace_job_gpu *x = &f->j->gpus[g];
	char key[CLI_JOB_NAME_LEN], name[CLI_JOB_NAME_LEN], live[CLI_JOB_NAME_LEN + 8];
	cli_job_gpu_names(x, key, sizeof(key), name, sizeof(name));
	snprintf(live, sizeof(live), "%s live", key);
	uint64_t pid = GPU_PID(g);
	perfetto_name_event(&f->o, "process_name", pid, pid, name);
	perfetto_sort_event(&f->o, pid, f->j->n_processes + g);
	struct gpu_counter c = {&f->o, pid, live};
	int ret = cli_job_gpu_series(f->j, g, f->buckets, gpu_sample, &c, bucket_ns);
	if (ret == 0 && x->peak_bytes)
		gpu_peak(f, x, pid, key);
	return ret;
}

static void job_meta(struct job_file *f, const uint64_t *gpu_bucket_ns)
{
	const struct cgtrace_job *j = f->j;
	struct cli_jw *w = &f->o.w;
	cli_jw_key_u64(w, "process_count", j->n_processes);
	cli_jw_key_u64(w, "span_ns", j->span_ns);
	cli_jw_key_u64(w, "zero_realtime_ns", j->zero_realtime_ns);
	cli_jw_key_u64(w, "clock_error_ns", j->clock_error_ns);
	cli_jw_key(w, "processes");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < j->n_processes; i++) {
		if (f->metas[i]) {
			cli_jw_raw(w, f->metas[i]);
			continue;
		}
		cli_jw_begin_object(w);
		cli_jw_key_str(w, "path", j->processes[i].path);
		cli_jw_key_str(w, "error",
		               j->processes[i].message ? j->processes[i].message
		                                       : "its view could not be read");
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
	cli_jw_key(w, "gpus");
	cli_jw_begin_array(w);
	for (size_t g = 0; g < j->n_gpus; g++) {
		const struct cgtrace_job_gpu *x = &j->gpus[g];
		cli_jw_begin_object(w);
		cli_jw_key_str(w, "uuid", x->uuid);
		cli_jw_key_str(w, "host", x->host);
		cli_jw_key_str(w, "device", x->device);
		cli_jw_key_str(w, "name", x->name);
		cli_jw_key_u64(w, "perfetto_pid", GPU_PID(g));
		cli_jw_key_u64(w, "peak_bytes", x->peak_bytes);
		cli_jw_key_u64(w, "peak_ns", x->peak_ns);
		cli_jw_key_u64(w, "bucket_ns", gpu_bucket_ns[g]);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
	if (f->n_unread) {
		char note[96];
		snprintf(note, sizeof(note), "%zu of %zu traces could not be read", f->n_unread,
		         j->n_processes);
		cli_jw_key_str(w, "cgtrace_note", note);
	}
}

static int write_job(struct job_file *f, const size_t *order)
{
	const struct cgtrace_job *j = f->j;
	uint64_t *gpu_bucket_ns = calloc(j->n_gpus ? j->n_gpus : 1, sizeof(*gpu_bucket_ns));
	int ret = gpu_bucket_ns ? 0 : -ENOMEM;
	if (ret == 0)
		perfetto_begin(&f->o);
	for (size_t k = 0; ret == 0 && k < j->n_processes; k++)
		ret = one_process(f, order[k], k);
	for (size_t g = 0; ret == 0 && g < j->n_gpus; g++)
		ret = one_gpu(f, g, &gpu_bucket_ns[g]);
	if (ret == 0) {
		perfetto_metadata_begin(&f->o);
		job_meta(f, gpu_bucket_ns);
		ret = perfetto_end(&f->o);
	}
	free(gpu_bucket_ns);
	return ret;
}

int cli_export_perfetto_job(char *const *paths, size_t n, const char *output, size_t buckets,
                            size_t max_spans)
{
	/* Warnings are the views' to say: each trace is read again for its view. */
	const struct cgtrace_job_options jo = {.flags = CGTRACE_READ_SKIP_STACKS};
	struct cgtrace_job *j;
	int ret = cgtrace_job_read((const char *const *)paths, n, &jo, &j);
	if (ret < 0) {
		fprintf(stderr, "cgtrace: reading the job: %s\n", strerror(-ret));
		return CLI_FAIL;
	}
	/* Nothing to show: no file, as for one trace that cannot be read. */
	if (j->n_errors == j->n_processes) {
		for (size_t i = 0; i < j->n_processes; i++)
			fprintf(stderr, "%s\n", j->processes[i].message);
		cgtrace_job_free(j);
		return CLI_FAIL;
	}
	struct cli_out out;
	if (cli_out_open(&out, output) != CLI_OK) {
		cgtrace_job_free(j);
		return CLI_FAIL;
	}
	struct job_file f = {.o = {.f = out.f}, .j = j, .buckets = buckets, .max_spans = max_spans};
	size_t *order = NULL;
	f.pids = calloc(j->n_processes ? j->n_processes : 1, sizeof(*f.pids));
	f.metas = calloc(j->n_processes ? j->n_processes : 1, sizeof(*f.metas));
	ret = f.pids && f.metas ? cli_job_order(j, &order) : -ENOMEM;
	if (ret == 0)
		ret = perfetto_pids(j, f.pids);
	if (ret == 0)
		ret = write_job(&f, order);
	if (ret < 0)
		fprintf(stderr, "%s: %s\n", out.f == stdout ? "<stdout>" : out.path,
		        strerror(-ret));
	/* A trace that could not be read fails the command, the others' file kept. */
	int status = cli_out_close(&out, ret == 0);
	for (size_t i = 0; f.metas && i < j->n_processes; i++)
		free(f.metas[i]);
	free(f.metas);
	free(f.pids);
	free(order);
	cli_buf_fini(&f.o.b);
	cgtrace_job_free(j);
	return ret < 0 || f.n_unread ? CLI_FAIL : status;
}

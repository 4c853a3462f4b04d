/* SPDX-License-Identifier: MIT */
/* Which of a baseline job's processes and GPUs each of a job's stands against (job-baseline.h). */
#include "job-baseline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "job-names.h"

/* What matches a process across two runs, whose pids differ. */
struct proc_key {
	int64_t rank; /* -1: matched by command */
	bool fork;
	const char *cmd;
	size_t nth; /* among the processes before it in the lanes' order of the same command */
	bool taken;
};

static int proc_keys(const struct cgtrace_job *j, const size_t *order, struct proc_key **out)
{
	struct proc_key *k = calloc(j->n_processes ? j->n_processes : 1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (size_t o = 0; o < j->n_processes; o++) {
		size_t i = order[o];
		const struct cgtrace_job_process *p = &j->processes[i];
		if (p->error) {
			k[i].taken = true; /* no page to draw against */
			continue;
		}
		const struct cgtrace_process *x = &p->process;
		k[i].fork = x->forked_from >= 0;
		k[i].rank = k[i].fork ? -1 : x->rank;
		k[i].cmd = x->cmdline && x->cmdline[0] ? x->cmdline
		           : x->executable             ? x->executable
		                                       : "";
		/* Quadratic in processes, not records: a job has hundreds at most. */
		for (size_t e = 0; e < o; e++) {
			const struct proc_key *q = &k[order[e]];
			if (q->rank < 0 && q->cmd && q->fork == k[i].fork &&
			    strcmp(q->cmd, k[i].cmd) == 0)
				k[i].nth++;
		}
	}
	*out = k;
	return 0;
}

static bool same_process(const struct proc_key *a, const struct proc_key *b)
{
	if (a->rank >= 0 || b->rank >= 0)
		return a->rank == b->rank;
	return a->fork == b->fork && a->nth == b->nth && strcmp(a->cmd, b->cmd) == 0;
}

static void match_gpus(const struct cgtrace_job *j, const struct cgtrace_job *b, long *gpu,
                       bool *taken)
{
	char key[CLI_JOB_NAME_LEN], other[CLI_JOB_NAME_LEN], name[CLI_JOB_NAME_LEN];
	for (size_t g = 0; g < j->n_gpus; g++) {
		gpu[g] = -1;
		cli_job_gpu_names(&j->gpus[g], key, sizeof(key), name, sizeof(name));
		for (size_t h = 0; h < b->n_gpus && gpu[g] < 0; h++) {
			cli_job_gpu_names(&b->gpus[h], other, sizeof(other), name, sizeof(name));
			if (!taken[h] && strcmp(key, other) == 0) {
				gpu[g] = (long)h;
				taken[h] = true;
			}
		}
	}
	/* Another machine's GPUs have other UUIDs: the rest in order. */
	for (size_t g = 0, h = 0; g < j->n_gpus; g++) {
		while (h < b->n_gpus && taken[h])
			h++;
		if (gpu[g] < 0 && h < b->n_gpus) {
			gpu[g] = (long)h;
			taken[h] = true;
		}
	}
}

int report_job_match(const struct cgtrace_job *j, const size_t *order, const struct cgtrace_job *b,
                     const size_t *border, long **process, long **gpu)
{
	struct proc_key *kj = NULL, *kb = NULL;
	long *pm = calloc(j->n_processes ? j->n_processes : 1, sizeof(*pm));
	long *gm = calloc(j->n_gpus ? j->n_gpus : 1, sizeof(*gm));
	bool *taken = calloc(b->n_gpus ? b->n_gpus : 1, sizeof(*taken));
	int ret = pm && gm && taken ? proc_keys(j, order, &kj) : -ENOMEM;
	if (ret == 0)
		ret = proc_keys(b, border, &kb);
	/* One process on each side is the same program, whatever it is called (as diff pairs them). */
	if (ret == 0 && j->n_processes == 1 && b->n_processes == 1 && !kj[0].taken && !kb[0].taken) {
		kj[0].rank = kb[0].rank = 0;
		kj[0].fork = kb[0].fork = false;
	}
	if (ret == 0) {
		for (size_t i = 0; i < j->n_processes; i++) {
			pm[i] = -1;
			for (size_t e = 0; !kj[i].taken && e < b->n_processes && pm[i] < 0; e++) {
				if (!kb[e].taken && same_process(&kj[i], &kb[e])) {
					pm[i] = (long)e;
					kb[e].taken = true;
				}
			}
		}
		match_gpus(j, b, gm, taken);
		*process = pm;
		*gpu = gm;
		pm = NULL;
		gm = NULL;
	}
	free(kj);
	free(kb);
	free(pm);
	free(gm);
	free(taken);
	return ret;
}

/* SPDX-License-Identifier: MIT */
/*
 * A job's processes placed: on one time axis, in their tree, and added
 * up per machine (docs/jobs.md). Processes of one boot share the
 * monotonic clock, so their times 0 are placed by it exactly; other
 * machines (and traces without the probe's clock tags) by the wall clock,
 * as well as each machine keeps it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

static bool ok(const struct cgtrace_job_process *p)
{
	return p->error == 0;
}

/* The process of p's boot that carries the tightest wall-clock reading. */
static long boot_ref(const struct cgtrace_job *j, const struct cgtrace_job_process *p)
{
	long best = -1;
	if (!p->process.has_clock || !p->process.boot_id[0])
		return -1;
	for (size_t k = 0; k < j->n_processes; k++) {
		const struct cgtrace_job_process *q = &j->processes[k];
		if (!ok(q) || !q->process.has_clock || strcmp(q->process.boot_id, p->process.boot_id))
			continue;
		if (best < 0 || q->process.clock_error_ns < j->processes[best].process.clock_error_ns)
			best = (long)k;
	}
	return best;
}

/* Each process's time 0 on the wall clock, and the job's axis from the earliest. */
static void place_in_time(struct cgtrace_job *j)
{
	uint64_t *base = calloc(j->n_processes ? j->n_processes : 1, sizeof(*base));
	uint64_t zero = UINT64_MAX, worst = 0;
	long first_ref = -2;
	bool one_clock = true;
	for (size_t i = 0; i < j->n_processes; i++) {
		struct cgtrace_job_process *p = &j->processes[i];
		if (!ok(p))
			continue;
		long r = boot_ref(j, p);
		uint64_t b = p->process.realtime_ns;
		if (r >= 0) {
			const struct cgtrace_process *ref = &j->processes[r].process;
			b = ref->realtime_ns + (p->process.monotonic_ns - ref->monotonic_ns);
		}
		if (first_ref == -2)
			first_ref = r;
		else if (r < 0 || r != first_ref)
			one_clock = false;
		uint64_t e = r >= 0 ? j->processes[r].process.clock_error_ns : p->process.clock_error_ns;
		worst = e > worst ? e : worst;
		if (base)
			base[i] = b;
		zero = b < zero ? b : zero;
	}
	j->zero_realtime_ns = zero == UINT64_MAX ? 0 : zero;
	/* Between two clocks, each one's error counts; within one boot there is none. */
	j->clock_error_ns = one_clock ? 0 : 2 * worst;
	for (size_t i = 0; base && i < j->n_processes; i++) {
		struct cgtrace_job_process *p = &j->processes[i];
		if (!ok(p))
			continue;
		p->start_ns = base[i] - zero;
		p->end_ns += p->start_ns;
		for (size_t d = 0; d < p->n_devices; d++)
			p->devices[d].peak_ns += p->start_ns;
		j->span_ns = p->end_ns > j->span_ns ? p->end_ns : j->span_ns;
	}
	free(base);
}

static bool same_machine(const struct cgtrace_process *a, const struct cgtrace_process *b)
{
	if (a->boot_id[0] && b->boot_id[0])
		return strcmp(a->boot_id, b->boot_id) == 0;
	return strcmp(a->host, b->host) == 0;
}

/*
 * The parent: the process of the same machine whose pid is the child's
 * parent pid (its fork's parent, else ppid), the latest started before
 * the child where pids were reused.
 */
static long parent_of(const struct cgtrace_job *j, size_t i)
{
	const struct cgtrace_job_process *c = &j->processes[i];
	int64_t want = c->process.forked_from >= 0 ? c->process.forked_from : c->process.ppid;
	long best = -1;
	for (size_t k = 0; want >= 0 && k < j->n_processes; k++) {
		const struct cgtrace_job_process *q = &j->processes[k];
		if (k == i || !ok(q) || q->process.pid != want ||
		    !same_machine(&q->process, &c->process) || q->start_ns > c->start_ns)
			continue;
		if (best < 0 || q->start_ns >= j->processes[best].start_ns)
			best = (long)k;
	}
	return best;
}

static int by_start(const void *a, const void *b, void *arg)
{
	const struct cgtrace_job *j = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t sx = j->processes[x].start_ns, sy = j->processes[y].start_ns;
	return sx < sy ? -1 : sx > sy ? 1 : x < y ? -1 : x > y;
}

/*
 * Tree order: a depth-first walk from the roots, siblings by start. Each
 * process's children are a list (first child, next sibling) built in one
 * pass over the processes in start order, so a folder of many thousands of
 * processes orders in O(n log n).
 */
static int order_tree(struct cgtrace_job *j)
{
	size_t n = j->n_processes, m = n ? n : 1;
	size_t *sorted = malloc(m * sizeof(*sorted));
	size_t *stack = malloc(m * sizeof(*stack));
	size_t *first = malloc(m * sizeof(*first));
	size_t *next = malloc(m * sizeof(*next));
	j->tree = malloc(m * sizeof(*j->tree));
	int ret = 0;
	if (!sorted || !stack || !first || !next || !j->tree) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		sorted[i] = i;
		first[i] = SIZE_MAX;
	}
	qsort_r(sorted, n, sizeof(*sorted), by_start, j);
	/* Prepended in start order: each list runs latest first, the order the stack wants. */
	for (size_t k = 0; k < n; k++) {
		size_t c = sorted[k];
		long p = j->processes[c].parent;
		if (p >= 0) {
			next[c] = first[p];
			first[p] = c;
		}
	}
	size_t out = 0;
	for (size_t k = 0; k < n; k++) {
		size_t i = sorted[k];
		if (j->processes[i].parent >= 0)
			continue;
		size_t top = 0;
		stack[top++] = i;
		while (top) {
			size_t x = stack[--top];
			j->tree[out++] = x;
			for (size_t c = first[x]; c != SIZE_MAX && top < n; c = next[c]) {
				j->processes[c].depth = j->processes[x].depth + 1;
				stack[top++] = c;
			}
		}
	}
out:
	free(sorted);
	free(stack);
	free(first);
	free(next);
	return ret;
}

static int add_hosts(struct cg_job *jj)
{
	struct cgtrace_job *j = &jj->pub;
	j->hosts = cg_arena_alloc(&jj->arena, (j->n_processes ? j->n_processes : 1) * sizeof(*j->hosts));
	if (!j->hosts)
		return -ENOMEM;
	for (size_t t = 0; t < j->n_processes; t++) {
		const struct cgtrace_job_process *p = &j->processes[j->tree[t]];
		if (!ok(p))
			continue;
		struct cgtrace_job_host *h = NULL;
		for (size_t k = 0; k < j->n_hosts && !h; k++)
			if (strcmp(j->hosts[k].host, p->process.host) == 0)
				h = &j->hosts[k];
		if (!h) {
			h = &j->hosts[j->n_hosts++];
			*h = (struct cgtrace_job_host){.host = p->process.host};
		}
		h->n_processes++;
		h->leaked_bytes += p->leaked_bytes;
		for (size_t d = 0; d < p->n_devices; d++)
			if (strcmp(p->devices[d].device, "cpu") == 0)
				h->peak_sum += p->devices[d].peak_bytes - p->devices[d].inherited_at_peak;
	}
	return 0;
}

int cg_job_place(struct cg_job *jj)
{
	struct cgtrace_job *j = &jj->pub;
	place_in_time(j);
	for (size_t i = 0; i < j->n_processes; i++)
		j->processes[i].parent = ok(&j->processes[i]) ? parent_of(j, i) : -1;
	/* A loop of parents (pids reused across boots read as one) is cut at its start. */
	for (size_t i = 0; i < j->n_processes; i++) {
		size_t steps = 0;
		for (long k = j->processes[i].parent; k >= 0 && steps <= j->n_processes; k = j->processes[k].parent)
			steps++;
		if (steps > j->n_processes)
			j->processes[i].parent = -1;
	}
	int ret = order_tree(j);
	return ret < 0 ? ret : add_hosts(jj);
}

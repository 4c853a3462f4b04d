/* SPDX-License-Identifier: MIT */
/*
 * cgtrace timeline of a job: each process's rows moved to the job's time
 * axis (its timestamps plus its start_ns). --csv merges them in time
 * order, the process's pid and rank after each row: every process is
 * read on a pool thread and spools its rows, in chunks, to one unlinked
 * file, and the merge reads a chunk per process at a time, so the job's
 * rows are never all in memory. The chart cuts the job's span into
 * slices and shows, for each, the highest live bytes one process held on
 * its device and which process that was.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-pool.h"
#include "job-load.h"
#include "job-text.h"
#include "job-timeline.h"
#include "timeline-csv.h"

/* A row as spooled: on the job's axis, its device an index in its process's names. */
struct point {
	uint64_t t, live, free_bytes;
	uint64_t by_category[CGTRACE_CAT_COUNT];
	uint32_t device;
	bool has_free;
};

/* The points a process spools at once, and a merge reads of it at once. */
#define CHUNK 256

struct chunk {
	uint64_t at;
	size_t n;
};

/* A process's rows in the spool, and the names of its devices. */
struct spooled {
	struct chunk *chunks;
	size_t n_chunks, cap_chunks;
	char **devices;
	size_t n_devices;
};

struct run {
	const struct cli_job_timeline_opts *o;
	const struct cgtrace_job *j;
	int status;
	/* --csv: the spool, its end (reserved by the readers atomically), each process's part. */
	int fd;
	uint64_t end;
	struct spooled *sp;
	/* The chart: per slice, the highest bytes of one process and which (SIZE_MAX: none). */
	uint64_t *max;
	size_t *who, rows;
};

/* A process being read. */
struct reading {
	struct run *r;
	const char *device; /* the chart's device of it, or --device */
	uint64_t shift;     /* its start on the job's axis */
	char line[2048];    /* the read's error or warning */
	bool oom;
	/* --csv */
	struct point buf[CHUNK];
	size_t n;
	struct spooled sp;
	/* The chart: per slice, the highest live bytes, those after its last record. */
	uint64_t *max, *end;
	bool *seen;
};

/* ---- --csv: spooled, then merged ---- */

static int write_at(int fd, const void *p, size_t len, uint64_t at)
{
	for (size_t done = 0; done < len;) {
		ssize_t w = pwrite(fd, (const char *)p + done, len - done, (off_t)(at + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return 0;
}

static int spool_flush(struct reading *g)
{
	if (!g->n)
		return 0;
	struct spooled *sp = &g->sp;
	size_t len = g->n * sizeof(*g->buf);
	uint64_t at = __atomic_fetch_add(&g->r->end, len, __ATOMIC_RELAXED);
	if (sp->n_chunks == sp->cap_chunks) {
		size_t cap = sp->cap_chunks ? 2 * sp->cap_chunks : 64;
		struct chunk *c = realloc(sp->chunks, cap * sizeof(*c));
		if (!c)
			return -1;
		sp->chunks = c;
		sp->cap_chunks = cap;
	}
	if (write_at(g->r->fd, g->buf, len, at) < 0)
		return -1;
	sp->chunks[sp->n_chunks++] = (struct chunk){at, g->n};
	g->n = 0;
	return 0;
}

/* The device's index among the process's names, added when new; UINT32_MAX: no memory. */
static uint32_t device_index(struct spooled *sp, const char *device)
{
	for (size_t i = 0; i < sp->n_devices; i++)
		if (strcmp(sp->devices[i], device) == 0)
			return (uint32_t)i;
	char **d = realloc(sp->devices, (sp->n_devices + 1) * sizeof(*d));
	if (!d)
		return UINT32_MAX;
	sp->devices = d;
	if (!(d[sp->n_devices] = strdup(device)))
		return UINT32_MAX;
	return (uint32_t)sp->n_devices++;
}

static int spool_point(void *user, const struct cgtrace_timeline_point *p)
{
	struct reading *g = user;
	if (g->device && strcmp(g->device, p->device) != 0)
		return 0;
	uint32_t d = device_index(&g->sp, p->device);
	if (d == UINT32_MAX) {
		g->oom = true;
		return 1;
	}
	struct point *x = &g->buf[g->n++];
	*x = (struct point){p->timestamp_ns + g->shift, p->live_bytes, p->free_bytes, {0}, d,
			    p->has_free};
	memcpy(x->by_category, p->by_category, sizeof(x->by_category));
	/* Positive: a read error is negative. */
	if (g->n == CHUNK && spool_flush(g) < 0) {
		snprintf(g->line, sizeof(g->line), "cgtrace timeline: the spool: %s",
			 strerror(errno ? errno : ENOSPC));
		return 1;
	}
	return 0;
}

static void spooled_free(struct spooled *sp)
{
	for (size_t i = 0; i < sp->n_devices; i++)
		free(sp->devices[i]);
	free(sp->devices);
	free(sp->chunks);
}

/* A process's rows as the merge reads them: a chunk at a time. */
struct cursor {
	size_t proc;
	const struct spooled *sp;
	size_t chunk, i, n;
	struct point buf[CHUNK];
};

/* The next chunk in buf; false at the end or when the spool could not be read. */
static bool cursor_load(struct cursor *c, int fd)
{
	if (c->chunk == c->sp->n_chunks)
		return false;
	const struct chunk *k = &c->sp->chunks[c->chunk++];
	size_t len = k->n * sizeof(*c->buf), done = 0;
	while (done < len) {
		ssize_t r = pread(fd, (char *)c->buf + done, len - done, (off_t)(k->at + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		done += (size_t)r;
	}
	c->i = 0;
	c->n = k->n;
	return true;
}

/* Time order; a tie by the process's place among the paths: the merge is the same every run. */
static bool before(const struct cursor *a, const struct cursor *b)
{
	uint64_t s = a->buf[a->i].t, t = b->buf[b->i].t;
	return s < t || (s == t && a->proc < b->proc);
}

static void sift_down(struct cursor **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && before(h[l], h[m]))
			m = l;
		if (l + 1 < n && before(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct cursor *x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

static void put_id(struct cli_buf *b, int64_t v)
{
	cli_buf_putc(b, ',');
	if (v >= 0)
		cli_buf_u64(b, (uint64_t)v);
}

/* Every spooled row in the job's time order; 0, or -1 when a read or the output failed. */
static int merge(struct run *r)
{
	size_t n = r->j->n_processes, k = 0;
	struct cursor *all = calloc(n ? n : 1, sizeof(*all));
	struct cursor **h = calloc(n ? n : 1, sizeof(*h));
	struct cli_buf out = {0};
	int ret = all && h ? 0 : -1;
	for (size_t p = 0; ret == 0 && p < n; p++) {
		all[p] = (struct cursor){.proc = p, .sp = &r->sp[p]};
		if (cursor_load(&all[p], r->fd))
			h[k++] = &all[p];
	}
	for (size_t i = k / 2; i-- > 0;)
		sift_down(h, k, i);
	cli_timeline_csv_head(&out, ",pid,rank");
	while (ret == 0 && k) {
		struct cursor *c = h[0];
		const struct point *x = &c->buf[c->i];
		const struct cgtrace_process *pr = &r->j->processes[c->proc].process;
		cli_timeline_csv_row(&out, x->t, c->sp->devices[x->device], x->live, x->has_free,
				     x->free_bytes, x->by_category);
		put_id(&out, pr->pid);
		put_id(&out, pr->rank);
		cli_buf_putc(&out, '\n');
		if (out.len > (1u << 16) && cli_timeline_csv_flush(&out))
			ret = -1;
		if (++c->i == c->n && !cursor_load(c, r->fd))
			h[0] = h[--k];
		sift_down(h, k, 0);
	}
	if (ret == 0 && cli_timeline_csv_flush(&out))
		ret = -1;
	cli_buf_fini(&out);
	free(h);
	free(all);
	return ret;
}

/* ---- the chart ---- */

static size_t slice_of(const struct run *r, uint64_t t)
{
	if (!r->j->span_ns)
		return 0;
	double f = (double)t / (double)r->j->span_ns;
	size_t s = (size_t)(f * (double)r->rows);
	return s < r->rows ? s : r->rows - 1;
}

static uint64_t slice_start(const struct run *r, size_t s)
{
	return (uint64_t)((double)r->j->span_ns * (double)s / (double)r->rows);
}

static int chart_point(void *user, const struct cgtrace_timeline_point *p)
{
	struct reading *g = user;
	if (strcmp(g->device, p->device) != 0)
		return 0;
	size_t s = slice_of(g->r, p->timestamp_ns + g->shift);
	if (!g->seen[s] || p->live_bytes > g->max[s])
		g->max[s] = p->live_bytes;
	g->end[s] = p->live_bytes; /* analysis order is time order */
	g->seen[s] = true;
	return 0;
}

/*
 * The process's highest bytes per slice, into g->max: what was live when a
 * slice began counts (a slice that only frees still held the memory until
 * the free), and a slice without records holds the previous one's end, from
 * its first record until the process ended.
 */
static void chart_carry(struct reading *g, const struct cgtrace_job_process *p)
{
	size_t last = slice_of(g->r, p->end_ns), first = g->r->rows;
	uint64_t carried = 0;
	for (size_t s = 0; s < g->r->rows; s++) {
		if (g->seen[s] && first == g->r->rows)
			first = s;
		if (g->seen[s] && s > last)
			last = s;
	}
	for (size_t s = 0; s < g->r->rows; s++) {
		if (s < first || s > last) {
			g->max[s] = 0;
			continue;
		}
		uint64_t hi = g->seen[s] && g->max[s] > carried ? g->max[s] : carried;
		carried = g->seen[s] ? g->end[s] : carried;
		g->max[s] = hi;
	}
}

static void chart_rows(const struct run *r)
{
	char t0[32], t1[32], m[32], who[48];
	uint64_t top = 0;
	for (size_t s = 0; s < r->rows; s++)
		if (r->who[s] != SIZE_MAX && r->max[s] > top)
			top = r->max[s];
	printf("%14s  %14s  %14s  %-16s  max live bytes of one process on %s, per time slice of "
	       "the job\n",
	       "slice start", "slice end", "max live", "process",
	       r->o->device ? r->o->device : "its device of highest peak");
	for (size_t s = 0; s < r->rows; s++) {
		bool any = r->who[s] != SIZE_MAX;
		uint64_t hi = any ? r->max[s] : 0;
		uint64_t stop = s + 1 < r->rows ? slice_start(r, s + 1) : r->j->span_ns;
		int width = top ? (int)((double)hi / (double)top * 50.0 + 0.5) : 0;
		printf("%14s  %14s  %14s  %-16s  ", cli_ns(t0, slice_start(r, s)), cli_ns(t1, stop),
		       cli_bytes(m, hi, r->o->exact),
		       any ? cli_job_name(who, sizeof(who), &r->j->processes[r->who[s]].process)
			   : "-");
		for (int k = 0; k < width; k++)
			fputs("#", stdout);
		putchar('\n');
	}
}

/* ---- each process, read on a pool thread, folded in path order ---- */

static int process_read(void *user, size_t i, void **out)
{
	struct run *r = user;
	const struct cgtrace_job_process *p = &r->j->processes[i];
	struct reading *g = calloc(1, sizeof(*g));
	*out = g;
	/* An unreadable trace's error is the job's, said once at the end. */
	if (!g || p->error)
		return CLI_FAIL;
	*g = (struct reading){.r = r, .device = r->o->device, .shift = p->start_ns};
	int (*fn)(void *, const struct cgtrace_timeline_point *) = spool_point;
	if (!r->o->csv) {
		if (!g->device)
			g->device = cli_job_device_shown(p);
		if (!g->device)
			return CLI_OK;
		g->max = calloc(r->rows, sizeof(*g->max));
		g->end = calloc(r->rows, sizeof(*g->end));
		g->seen = calloc(r->rows, sizeof(*g->seen));
		if (!g->max || !g->end || !g->seen)
			return CLI_FAIL;
		fn = chart_point;
	}
	int ret = cgtrace_memory_timeline_read(p->path, NULL, fn, g, g->line, sizeof(g->line));
	if (ret == 0 && r->o->csv && spool_flush(g) < 0) {
		snprintf(g->line, sizeof(g->line), "cgtrace timeline: the spool: %s",
			 strerror(errno ? errno : ENOSPC));
		ret = 1;
	}
	if (g->oom)
		snprintf(g->line, sizeof(g->line), "%s: out of memory", p->path);
	if (ret != 0)
		return CLI_FAIL;
	if (!r->o->csv)
		chart_carry(g, p);
	return CLI_OK;
}

static void process_fold(void *user, size_t i, void *state, int status)
{
	struct run *r = user;
	struct reading *g = state;
	if (!g && !r->j->processes[i].error)
		fprintf(stderr, "%s: out of memory\n", r->j->processes[i].path);
	if (g && g->line[0])
		fprintf(stderr, "%s\n", g->line);
	if (status != CLI_OK)
		r->status = CLI_FAIL;
	if (g && r->o->csv) {
		r->sp[i] = g->sp;
		g->sp = (struct spooled){0};
	}
	/* The highest of one process per slice: on a tie, the first among the paths. */
	for (size_t s = 0; status == CLI_OK && g && g->max && s < r->rows; s++)
		if (g->max[s] && (r->who[s] == SIZE_MAX || g->max[s] > r->max[s])) {
			r->max[s] = g->max[s];
			r->who[s] = i;
		}
	if (g) {
		spooled_free(&g->sp);
		free(g->max);
		free(g->end);
		free(g->seen);
	}
	free(g);
}

static int answer(struct run *r)
{
	static const struct cli_pool_ops ops = {process_read, process_fold};
	const char *dir = NULL;
	size_t n = r->j->n_processes;
	if (r->o->csv) {
		r->fd = cli_temp_fd(&dir);
		if (r->fd < 0) {
			fprintf(stderr, "cgtrace timeline: cannot spool to %s: %s\n", dir,
				strerror(errno));
			return CLI_FAIL;
		}
		r->sp = calloc(n ? n : 1, sizeof(*r->sp));
	} else {
		/* All of a job at one instant is one slice, not rows of zero width. */
		r->rows = r->j->span_ns ? r->o->rows : 1;
		r->max = calloc(r->rows, sizeof(*r->max));
		r->who = malloc(r->rows * sizeof(*r->who));
		for (size_t s = 0; r->who && s < r->rows; s++)
			r->who[s] = SIZE_MAX;
	}
	if ((r->o->csv && !r->sp) || (!r->o->csv && (!r->max || !r->who))) {
		fprintf(stderr, "cgtrace timeline: %s\n", strerror(ENOMEM));
		return CLI_FAIL;
	}
	cli_pool_run(n, r->o->jobs, &ops, r);
	bool any = false;
	for (size_t s = 0; !r->o->csv && s < r->rows; s++)
		any |= r->who[s] != SIZE_MAX;
	if (r->o->csv && merge(r) < 0) {
		fprintf(stderr, "cgtrace timeline: output failed\n");
		return CLI_FAIL;
	}
	if (!r->o->csv && !any)
		printf("no memory records%s%s\n", r->o->device ? " for device " : "",
		       r->o->device ? r->o->device : "");
	else if (!r->o->csv)
		chart_rows(r);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "cgtrace timeline: output failed\n");
		return CLI_FAIL;
	}
	return r->status;
}

int cli_job_timeline(char *const *paths, size_t n, const struct cli_job_timeline_opts *o)
{
	struct cgtrace_job *j = cli_job_load(paths, n, o->jobs, CGTRACE_READ_SKIP_STACKS);
	if (!j)
		return CLI_FAIL;
	struct run r = {.o = o, .j = j, .fd = -1};
	int status = answer(&r);
	/* The unreadable traces, said once each; every other process was answered. */
	if (cli_job_errors(j) != CLI_OK)
		status = CLI_FAIL;
	for (size_t i = 0; r.sp && i < j->n_processes; i++)
		spooled_free(&r.sp[i]);
	free(r.sp);
	free(r.max);
	free(r.who);
	if (r.fd >= 0)
		close(r.fd);
	cgtrace_job_free(j);
	return status;
}

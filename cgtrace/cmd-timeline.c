/* SPDX-License-Identifier: MIT */
/* cgtrace timeline: live bytes after every memory record, as CSV or a chart. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "job-load.h"
#include "job-timeline.h"
#include "timeline-csv.h"

struct timeline_args {
	const char *device;
	size_t rows, jobs;
	bool csv, exact;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_timeline = {
	.name = "timeline",
	.args = "[--device D] [--csv | --rows N] [--bytes] [--jobs N] TRACE... | DIR",
	.help = "Live bytes of a device after every memory record, in analysis order.\n"
		"Without --csv, a chart of the device given by --device, else of the device\n"
		"that reached the highest live bytes.\n\n"
		"Several traces, or a folder of them (cgprobe -o DIR/), are one job\n"
		"(docs/jobs.md): every process's rows on the job's time axis (its own\n"
		"times plus its start in the job). --csv merges them in time order, with\n"
		"pid and rank columns after the others (empty when unknown); the chart\n"
		"cuts the job's span into slices and shows, for each, the highest live\n"
		"bytes one process held on its device (--device D, else each process's\n"
		"device of highest peak) and that process (its rank, else its pid).\n\n",
	.label_width = 12,
	.opts = (const struct cli_opt[]){
		{.name = "csv", .offset = offsetof(struct timeline_args, csv),
		 .help = "timestamp_ns,device,live_bytes,free_bytes rows (free_bytes is\n"
			 "empty when the device's capacity is unknown), then the\n"
			 "device's live bytes by category: parameter_bytes,\n"
			 "activation_bytes, gradient_bytes, optimizer_bytes, other_bytes"},
		{.name = "device", .kind = CLI_OPT_STR,
		 .offset = offsetof(struct timeline_args, device), .arg = "D",
		 .help = "only records of device D (e.g. cpu, cuda:0)"},
		{.name = "rows", .kind = CLI_OPT_COUNT, .offset = offsetof(struct timeline_args, rows),
		 .arg = "N", .min = 1, .max = 10000,
		 .help = "chart rows (default 24), one per time slice: the slice's start\n"
			 "and end, the highest live bytes in it, the live bytes at its\n"
			 "end, and a bar of the highest"},
		{.name = "bytes", .offset = offsetof(struct timeline_args, exact),
		 .help = "exact byte counts in the chart"},
		CLI_OPT_JOBS(struct timeline_args, jobs),
		{0},
	},
	.help_tail = "\nThe records are not kept: the trace is read twice for --csv (the devices'\n"
		     "capacities, then the rows) and four times for the chart (its device and\n"
		     "time span, then the rows), in memory bounded by the allocations live at\n"
		     "once. Standard input or a pipe is spooled as it is read to an unlinked file\n"
		     "in $TMPDIR (else /tmp). Memory records that go back in time make it read\n"
		     "the trace into memory instead, with a note on stderr. A job's traces are\n"
		     "read once more for the job's time axis; its --csv rows are spooled to an\n"
		     "unlinked file in $TMPDIR (else /tmp) and merged from there.\n",
	.run = run,
};

struct csv_state {
	const char *device;
	struct cli_buf out;
	int err;
};

static int csv_row(void *user, const struct cgtrace_timeline_point *p)
{
	struct csv_state *s = user;
	if (s->device && strcmp(s->device, p->device) != 0)
		return 0;
	cli_timeline_csv_row(&s->out, p->timestamp_ns, p->device, p->live_bytes, p->has_free,
			     p->free_bytes, p->by_category);
	cli_buf_putc(&s->out, '\n');
	/* Positive: a read error is negative. */
	if (s->out.len > (1u << 16) && cli_timeline_csv_flush(&s->out))
		return 1;
	return 0;
}

/* A device's time span in the trace: its first and last point. */
struct span_of {
	char *device;
	uint64_t t0, t1;
};

struct chart_state {
	const char *device;
	char *best_device; /* without --device: the device with the highest live bytes */
	uint64_t best;
	struct span_of *spans;
	size_t n_spans;
	uint64_t t0, t1;
	size_t rows;
	uint64_t *max, *end; /* per slice: highest live bytes, live bytes after its last record */
	bool *seen;
	uint64_t top;
	int pass;
	bool oom;
};

/* The slice of a timestamp: slices split [t0, t1] evenly, t1 falls in the last. */
static size_t slice_of(const struct chart_state *s, uint64_t ts)
{
	if (s->t1 == s->t0)
		return 0;
	double f = (double)(ts - s->t0) / (double)(s->t1 - s->t0);
	size_t row = (size_t)(f * (double)s->rows);
	return row < s->rows ? row : s->rows - 1;
}

static uint64_t slice_start(const struct chart_state *s, size_t row)
{
	return s->t0 + (uint64_t)((double)(s->t1 - s->t0) * (double)row / (double)s->rows);
}

/* The first read: the device with the highest live bytes, every device's time span. */
static int chart_scan(struct chart_state *s, const struct cgtrace_timeline_point *p)
{
	if (!s->best_device || p->live_bytes > s->best) {
		free(s->best_device);
		s->best_device = strdup(p->device);
		s->best = p->live_bytes;
	}
	size_t i = 0;
	while (i < s->n_spans && strcmp(s->spans[i].device, p->device) != 0)
		i++;
	if (i == s->n_spans) {
		struct span_of *n = realloc(s->spans, (i + 1) * sizeof(*n));
		char *dev = strdup(p->device);
		if (n)
			s->spans = n;
		if (!n || !dev || !s->best_device) {
			free(dev);
			s->oom = true;
			return 1;
		}
		s->spans[s->n_spans++] = (struct span_of){dev, p->timestamp_ns, p->timestamp_ns};
	}
	/* Analysis order is time order. */
	s->spans[i].t1 = p->timestamp_ns;
	return 0;
}

static int chart_point(void *user, const struct cgtrace_timeline_point *p)
{
	struct chart_state *s = user;
	if (s->pass == 0)
		return chart_scan(s, p);
	if (strcmp(s->device, p->device) != 0)
		return 0;
	size_t row = slice_of(s, p->timestamp_ns);
	if (!s->seen[row] || p->live_bytes > s->max[row])
		s->max[row] = p->live_bytes;
	s->end[row] = p->live_bytes; /* analysis order is time order */
	s->seen[row] = true;
	if (p->live_bytes > s->top)
		s->top = p->live_bytes;
	return 0;
}

/*
 * One row per slice: its start and end, the highest live bytes in it, the
 * live bytes at its end, and a bar of the highest. What was live when the
 * slice began counts towards its highest (a slice that only frees still
 * held the memory until the free), and a slice without records holds the
 * previous one's end all through.
 */
static void chart_rows(const struct chart_state *s, bool exact)
{
	char t0[32], t1[32], m[32], e[32];
	uint64_t carried = 0;
	printf("%14s  %14s  %14s  %14s  max live bytes on %s, per time slice\n", "slice start",
	       "slice end", "max live", "live at end", s->device);
	for (size_t i = 0; i < s->rows; i++) {
		uint64_t hi = s->seen[i] && s->max[i] > carried ? s->max[i] : carried;
		uint64_t end = s->seen[i] ? s->end[i] : carried;
		uint64_t stop = i + 1 < s->rows ? slice_start(s, i + 1) : s->t1;
		int width = s->top ? (int)((double)hi / (double)s->top * 50.0 + 0.5) : 0;
		printf("%14s  %14s  %14s  %14s  ", cli_ns(t0, slice_start(s, i)), cli_ns(t1, stop),
		       cli_bytes(m, hi, exact), cli_bytes(e, end, exact));
		for (int k = 0; k < width; k++)
			fputs("#", stdout);
		putchar('\n');
		carried = end;
	}
}

/* A read of the trace: fn's positive return, or a read error printed (-1); warnings printed. */
static int timeline_pass(const char *path, off_t start,
			 int (*fn)(void *user, const struct cgtrace_timeline_point *p), void *user,
			 bool warn)
{
	char err[2048];
	/* Standard input made a regular file (start >= 0): each read starts where it began. */
	if (start >= 0 && strcmp(path, "-") == 0 && lseek(STDIN_FILENO, start, SEEK_SET) < 0) {
		fprintf(stderr, "<stdin>: %s\n", strerror(errno));
		return -1;
	}
	int ret = cgtrace_memory_timeline_read(path, NULL, fn, user, err, sizeof(err));
	if (ret < 0 || (warn && err[0]))
		fprintf(stderr, "%s\n", err);
	return ret < 0 ? -1 : ret;
}

static int chart(const char *path, off_t start, const char *device, size_t rows, bool exact)
{
	struct chart_state s = {.device = device, .rows = rows};
	s.max = calloc(rows, sizeof(*s.max));
	s.end = calloc(rows, sizeof(*s.end));
	s.seen = calloc(rows, sizeof(*s.seen));
	int ret = !s.max || !s.end || !s.seen ? 1 : 0;
	if (ret == 0)
		ret = timeline_pass(path, start, chart_point, &s, true);
	if (ret == 0 && !s.device)
		s.device = s.best_device;
	const struct span_of *sp = NULL;
	for (size_t i = 0; ret == 0 && s.device && i < s.n_spans; i++)
		if (strcmp(s.spans[i].device, s.device) == 0)
			sp = &s.spans[i];
	if (ret == 0 && !sp) {
		printf("no memory records%s%s\n", device ? " for device " : "",
		       device ? device : "");
	} else if (ret == 0) {
		s.t0 = sp->t0;
		s.t1 = sp->t1;
		/* All records at one instant make one slice, not rows of zero width. */
		if (s.t1 == s.t0)
			s.rows = 1;
		s.pass = 1;
		ret = timeline_pass(path, start, chart_point, &s, false);
		if (ret == 0)
			chart_rows(&s, exact);
	}
	if (s.oom)
		ret = 1;
	for (size_t i = 0; i < s.n_spans; i++)
		free(s.spans[i].device);
	free(s.spans);
	free(s.best_device);
	free(s.max);
	free(s.end);
	free(s.seen);
	return ret;
}

/*
 * The chart reads the trace twice over: standard input that is not a
 * regular file is copied first to an unlinked file, which becomes stdin.
 * Returns where stdin's trace begins, or -1 with the message printed.
 */
static off_t rewindable_stdin(void)
{
	struct stat st;
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode))
		return lseek(STDIN_FILENO, 0, SEEK_CUR);
	const char *dir;
	int fd = cli_temp_fd(&dir);
	char buf[1 << 16];
	ssize_t n = 0;
	while (fd >= 0 &&
	       ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0 && write(fd, buf, (size_t)n) != n)
			n = -1;
	if (fd < 0 || n < 0 || dup2(fd, STDIN_FILENO) < 0) {
		fprintf(stderr, "<stdin>: cannot spool to %s: %s\n", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int run(int argc, char **argv)
{
	struct timeline_args a = {.rows = 24};
	int status;
	if (!cli_parse(&cli_timeline, argc, argv, &a, &status))
		return status;
	if (cli_job_args(argc, argv)) {
		size_t n;
		char **paths = cli_job_paths_of(argc, argv, &n);
		if (!paths)
			return CLI_FAIL;
		const struct cli_job_timeline_opts o = {
		    .device = a.device, .rows = a.rows, .jobs = a.jobs, .csv = a.csv,
		    .exact = a.exact};
		status = cli_job_timeline(paths, n, &o);
		free(paths);
		return status;
	}
	const char *path = cli_trace_arg(&cli_timeline, argc, argv, &status);
	if (!path)
		return status;
	int ret;
	if (a.csv) {
		struct csv_state s = {.device = a.device};
		cli_timeline_csv_head(&s.out, "");
		ret = timeline_pass(path, -1, csv_row, &s, true);
		if (ret == 0)
			ret = cli_timeline_csv_flush(&s.out) ? 1 : 0;
		cli_buf_fini(&s.out);
	} else {
		off_t start = strcmp(path, "-") == 0 ? rewindable_stdin() : 0;
		ret = start < 0 ? -1 : chart(path, start, a.device, a.rows, a.exact);
	}
	/* A read error was printed already. */
	if (ret < 0)
		return CLI_FAIL;
	if (ret != 0 || fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "cgtrace timeline: %s: output failed\n", path);
		return CLI_FAIL;
	}
	return CLI_OK;
}

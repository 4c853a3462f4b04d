/* SPDX-License-Identifier: MIT */
/* cgtrace summary: the format's summary plus host and devices side by side. */
#include <langinfo.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "job-load.h"
#include "job-summary.h"

struct summary_args {
	bool json, brief, exact, job, series;
	size_t jobs;
	uint64_t fold;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_summary = {
	.name = "summary",
	.args = "[--json | --brief] [--bytes] [--jobs N] [--fold BYTES] TRACE... | DIR",
	.help = "Counts spans, ops and memory records, finds the peak, and shows each\n"
		"device (host and GPUs) side by side. A note says when the probe left\n"
		"allocations out (CGPROBE_MIN_BYTES, recorded in meta).\n\n"
		"Several traces, or a folder of them (cgprobe -o DIR/), are one job\n"
		"(docs/jobs.md): a row per process in tree order (pid, parent, rank,\n"
		"host, host peak and when, leaked bytes, command; a line per other\n"
		"device), the machines' totals, and each physical GPU's bytes of all\n"
		"its processes summed on the job's time axis, with its peak and each\n"
		"process's share then. Times are from the job's first start.\n\n",
	.label_width = 10,
	.opts = (const struct cli_opt[]){
		{.name = "json", .offset = offsetof(struct summary_args, json),
		 .help = "one JSON object: op_count, total_ns, span_count, root_span_count,\n"
			 "max_depth, alloc_count, free_count, peak_bytes, then peak_device,\n"
			 "peak_timestamp_ns, complete, truncated and devices"},
		{.name = "brief", .offset = offsetof(struct summary_args, brief),
		 .help = "the few lines the cgprobe wrapper prints under a trace:\n"
			 "  PROGRAM, pid PID: N allocs, M frees; STATE; SIZE on disk\n"
			 "(STATE: complete, or incomplete: why; ': no allocations\n"
			 "recorded;' without memory records; no size for stdin), then\n"
			 "for each device with memory records\n"
			 "  peak SIZE on DEVICE at TIME[, capacity SIZE]\n"
			 "and the CGPROBE_MIN_BYTES note when it applies"},
		CLI_OPT_BYTES(struct summary_args, exact),
		CLI_OPT_JOBS(struct summary_args, jobs),
		{.name = "job", .offset = offsetof(struct summary_args, job),
		 .help = "read even one TRACE as a job (what a reader of many machines\n"
			 "gathers per trace: docs/jobs.md, \"Beyond one machine\")"},
		{.name = "series", .offset = offsetof(struct summary_args, series),
		 .help = "a job's --json: each device other than the host with its\n"
			 "bytes over time, [[t, bytes], ...] on the job's axis"},
		{.name = "fold", .kind = CLI_OPT_SIZE, .offset = offsetof(struct summary_args, fold),
		 .arg = "BYTES",
		 .help = "a job: processes whose peak is under BYTES fold into one line\n"
			 "(default 65536; 0 shows every one; 64KiB, 1MB: docs/compare.md)"},
		{0},
	},
	.run = run,
};

/* The trace is complete when the root span s1 was closed by the writer. */
static bool root_closed(const struct cgtrace_doc *doc, size_t *open_spans)
{
	bool closed = true;
	*open_spans = 0;
	for (size_t i = 0; i < cgtrace_doc_count(doc, CGTRACE_KIND_SPAN_START); i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(doc, i, &s);
		if (s.closed)
			continue;
		(*open_spans)++;
		if (!s.parent_id)
			closed = false;
	}
	return closed;
}

/*
 * What the program marked: spans with a step (forward, backward, optimizer:
 * what the run's phase and capture step refer to) and closed measured spans
 * (what total_ns sums). An unannotated program under the probe has neither,
 * and its summary should not print zeros that look like measurements.
 */
static void annotations(const struct cgtrace_doc *doc, bool *steps, bool *measured)
{
	*steps = *measured = false;
	for (size_t i = 0; i < cgtrace_doc_count(doc, CGTRACE_KIND_SPAN_START); i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(doc, i, &s);
		*steps |= s.step != CGTRACE_STEP_NONE;
		*measured |= s.measured && s.closed;
	}
}

/* The cgprobe_device record of a device, if the trace has one. */
static bool device_info(const struct cgtrace_doc *doc, const char *device,
			struct cgtrace_device_info *out)
{
	for (size_t i = 0; i < cgtrace_doc_count(doc, CGTRACE_KIND_DEVICE_INFO); i++) {
		cgtrace_doc_device_info(doc, i, out);
		if (strcmp(out->device, device) == 0)
			return true;
	}
	return false;
}

static int print_json(const struct cgtrace_doc *doc, const struct cgtrace_summary *s,
		      const struct cgtrace_memory_report *rep)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	size_t open_spans;
	const struct {
		const char *key;
		uint64_t v;
	} fields[] = {
		{"op_count", s->op_count},       {"total_ns", s->total_ns},
		{"span_count", s->span_count},   {"root_span_count", s->root_span_count},
		{"max_depth", s->max_depth},     {"alloc_count", s->alloc_count},
		{"free_count", s->free_count},   {"peak_bytes", s->peak_bytes},
		{"peak_timestamp_ns", rep->peak_timestamp_ns},
	};
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (i == 8)
			cli_jw_key_str(&w, "peak_device", rep->peak_device);
		cli_jw_key_u64(&w, fields[i].key, fields[i].v);
	}
	cli_jw_key_u64(&w, "update_count", rep->update_count);
	cli_json_moment(&w, "peak_", &rep->peak_moment);
	cli_jw_key_bool(&w, "complete", root_closed(doc, &open_spans));
	cli_jw_key_bool(&w, "truncated", cgtrace_doc_truncated(doc));
	cli_jw_key(&w, "devices");
	cli_jw_begin_array(&w);
	for (size_t i = 0; i < rep->n_devices; i++) {
		const struct cgtrace_device_peak *d = &rep->by_device[i];
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "device", d->device);
		cli_jw_key_u64(&w, "peak_bytes", d->peak_bytes);
		cli_jw_key_u64(&w, "capacity_bytes", d->capacity_bytes);
		cli_jw_key_u64(&w, "final_bytes", d->final_bytes);
		cli_json_moment(&w, "peak_", &rep->device_moments[i]);
		struct cgtrace_device_info info;
		if (device_info(doc, d->device, &info)) {
			cli_jw_key_str(&w, "uuid", info.uuid);
			cli_jw_key_str(&w, "name", info.name);
		}
		cli_jw_end_object(&w);
	}
	cli_jw_end_array(&w);
	cli_jw_end_object(&w);
	return cli_jw_print(&w);
}

/* Checkpoints taken because an allocation failed: where the program ran out. */
static void print_ooms(const struct cgtrace_doc *doc, bool exact)
{
	char a[32], b[32], c[32], d[32];
	for (size_t i = 0; i < cgtrace_doc_count(doc, CGTRACE_KIND_DEVICE_MEMORY); i++) {
		struct cgtrace_device_memory m;
		cgtrace_doc_device_memory(doc, i, &m);
		if (!m.has_oom_request)
			continue;
		printf("%-12s %s could not get %s at %s (used %s, free %s)\n", "out of memory",
		       m.device, cli_bytes(a, m.oom_request_bytes, exact), cli_ns(b, m.timestamp_ns),
		       cli_bytes(c, m.used_bytes, exact), cli_bytes(d, m.free_bytes, exact));
	}
}

static void print_identities(const struct cgtrace_doc *doc, const struct cgtrace_memory_report *rep)
{
	for (size_t i = 0; i < rep->n_devices; i++) {
		struct cgtrace_device_info info;
		if (device_info(doc, rep->by_device[i].device, &info))
			printf("%-12s %s%s%s\n", info.device, info.name ? info.name : "",
			       info.name ? "  " : "", info.uuid);
	}
}

static void print_devices(const struct cgtrace_memory_report *rep, bool exact)
{
	char a[32], b[32], c[32], d[32], e[32], f[32];
	if (!rep->n_devices)
		return;
	printf("\n%-12s %14s %14s %14s %12s %12s %14s\n", "device", "peak", "peak at", "capacity",
	       "allocs", "frees", "live at end");
	for (size_t i = 0; i < rep->n_devices; i++) {
		const struct cgtrace_device_peak *p = &rep->by_device[i];
		printf("%-12s %14s %14s %14s %12s %12s %14s\n", p->device,
		       cli_bytes(a, p->peak_bytes, exact), cli_ns(b, p->peak_timestamp_ns),
		       p->capacity_bytes ? cli_bytes(c, p->capacity_bytes, exact) : "-",
		       cli_count(d, p->alloc_count), cli_count(e, p->free_count),
		       cli_bytes(f, p->final_bytes, exact));
	}
}

#define SPARK_CELLS 60

/* Nine levels, blank for nothing live: block elements, or ASCII where the locale is not UTF-8. */
static const char *spark_level(unsigned k, bool utf8)
{
	static const char *const blocks[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
					     "\u2585", "\u2586", "\u2587", "\u2588"};
	static const char *const ascii[] = {" ", ".", ",", "-", ":", "=", "+", "*", "#"};
	return utf8 ? blocks[k] : ascii[k];
}

static bool utf8_locale(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
}

/* One line per device: its live bytes over the trace, scaled to its own peak. */
static void print_sparklines(const struct cgtrace_doc *doc, const struct cgtrace_memory_report *rep,
			     bool exact)
{
	uint64_t cells[SPARK_CELLS], t0 = 0, t1 = 0;
	bool utf8 = utf8_locale(), head = false;
	char a[32], b[32], c[32];
	for (size_t i = 0; i < rep->n_devices; i++) {
		const struct cgtrace_device_peak *p = &rep->by_device[i];
		if (!p->peak_bytes ||
		    cgtrace_doc_live_cells(doc, p->device, cells, SPARK_CELLS, &t0, &t1) < 0)
			continue;
		if (!head)
			printf("\nlive bytes over time, %s to %s, each line scaled to its device's peak\n",
			       cli_ns(a, t0), cli_ns(b, t1));
		head = true;
		printf("%-12s ", p->device);
		for (unsigned k = 0; k < SPARK_CELLS; k++) {
			uint64_t v = cells[k] > p->peak_bytes ? p->peak_bytes : cells[k];
			/* Anything live shows; only the peak's own cells reach the top. */
			unsigned level = !v ? 0 : v == p->peak_bytes ? 8
				       : 1 + (unsigned)((double)v / (double)p->peak_bytes * 7);
			fputs(spark_level(level, utf8), stdout);
		}
		printf("  %s\n", cli_bytes(c, p->peak_bytes, exact));
	}
}

static void print_human(const char *path, const struct cgtrace_doc *doc,
			const struct cgtrace_summary *s, const struct cgtrace_memory_report *rep,
			bool exact)
{
	struct cgtrace_meta m;
	char a[32], b[32], c[32];
	size_t open_spans;
	bool complete = root_closed(doc, &open_spans), steps, measured;

	cgtrace_doc_meta(doc, &m);
	printf("%-12s %s\n", "trace", path);
	printf("%-12s %s\n", "entrypoint", m.entrypoint);
	annotations(doc, &steps, &measured);
	if (steps || s->op_count)
		printf("%-12s %s (%s, capture step %llu, %llu warm-up)\n", "run", m.run_id,
		       cgtrace_phase_name(m.phase), (unsigned long long)m.capture_step,
		       (unsigned long long)m.warmup_steps);
	else
		printf("%-12s %s\n", "run", m.run_id);
	printf("%-12s %s\n", "recorded", m.timestamp);
	printf("%-12s %s\n", "device", m.device);
	for (size_t i = 0; i < m.n_tags; i++)
		if (!strcmp(m.tags[i].key, "pid") || !strcmp(m.tags[i].key, "cmdline"))
			printf("%-12s %s\n", m.tags[i].key, m.tags[i].value);
	if (complete && !cgtrace_doc_truncated(doc))
		printf("%-12s complete\n", "status");
	else
		printf("%-12s incomplete: %s%s%s\n", "status",
		       complete ? "" : "the root span was never closed (the process died or "
				       "the trace was cut)",
		       !complete && cgtrace_doc_truncated(doc) ? "; " : "",
		       cgtrace_doc_truncated(doc) ? "the last record was cut short" : "");
	printf("\n%-12s %s (%s root, max depth %llu, %zu open)\n", "spans",
	       cli_count(a, s->span_count), cli_count(b, s->root_span_count),
	       (unsigned long long)s->max_depth, open_spans);
	if (measured)
		printf("%-12s %s\n", "measured", cli_ns(a, s->total_ns));
	if (s->op_count)
		printf("%-12s %s\n", "ops", cli_count(a, s->op_count));
	printf("%-12s %s allocs, %s frees\n", "memory", cli_count(a, s->alloc_count),
	       cli_count(b, s->free_count));
	char when[160];
	if (rep->update_count)
		printf("%-12s %s (%s)\n", "updates", cli_count(a, rep->update_count),
		       rep->peak_moment.inferred ? "inferred from forward steps" : "marked");
	if (s->peak_bytes)
		printf("%-12s %s on %s at %s%s\n", "peak", cli_bytes(a, s->peak_bytes, exact),
		       rep->peak_device, cli_ns(c, rep->peak_timestamp_ns),
		       cli_moment(when, sizeof(when), rep, &rep->peak_moment));
	else
		printf("%-12s none\n", "peak");
	char note[192];
	if (cli_capture_note(note, sizeof(note), doc))
		printf("%-12s %s\n", "note", note);
	if (cli_inherited_note(note, sizeof(note), doc))
		printf("%-12s %s\n", "note", note);
	if (cli_min_bytes_note(note, sizeof(note), doc, exact, CLI_NOTE_FULL))
		printf("%-12s %s\n", "note", note);
	print_devices(rep, exact);
	print_identities(doc, rep);
	print_sparklines(doc, rep, exact);
	print_ooms(doc, exact);
}

/* "1 alloc", "2 allocs", "1,085 allocs". */
static const char *counted(char buf[48], uint64_t n, const char *what)
{
	char c[32];
	snprintf(buf, 48, "%s %s%s", cli_count(c, n), what, n == 1 ? "" : "s");
	return buf;
}

/* A tag of the probe's that holds a plain decimal (docs/probe.md: the end figures). */
static bool tag_u64(const struct cgtrace_doc *doc, const char *key, uint64_t *v)
{
	const char *s = cli_tag(doc, key);
	if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 20)
		return false;
	*v = strtoull(s, NULL, 10);
	return true;
}

/* What the run's memory was and the probe's share of it, when the trace ended so as to say. */
static void print_probe_memory(const struct cgtrace_doc *doc, bool exact)
{
	uint64_t peak, probe, stacks;
	char a[32], b[32], c[32];
	if (!tag_u64(doc, "cgprobe_peak_rss_bytes", &peak) ||
	    !tag_u64(doc, "cgprobe_probe_bytes", &probe) ||
	    !tag_u64(doc, "cgprobe_stack_table_bytes", &stacks))
		return;
	printf("memory: peak RSS %s, of which the probe's %s (stack tables %s)\n",
	       cli_bytes(a, peak, exact), cli_bytes(b, probe, exact), cli_bytes(c, stacks, exact));
}

/*
 * The facts a user wants first, for the cgprobe wrapper to print under the
 * trace's path. The wrapper is written against these lines (it finds an
 * empty trace by ": no allocations recorded;"): change them only with it.
 */
static void print_brief(const char *path, const struct cgtrace_doc *doc,
			const struct cgtrace_memory_report *rep, bool exact)
{
	struct cgtrace_meta m;
	struct stat st;
	char a[48], b[48], note[192];
	size_t open_spans;
	bool complete = root_closed(doc, &open_spans);
	const char *program = cli_tag(doc, "executable"), *pid = cli_tag(doc, "pid");

	cgtrace_doc_meta(doc, &m);
	/* A producer other than the probe may leave these tags empty. */
	printf("%s", program && *program ? program : m.entrypoint);
	if (pid && *pid)
		printf(", pid %s", pid);
	if (cgtrace_doc_records(doc, CGTRACE_KIND_MEMORY))
		printf(": %s, %s", counted(a, rep->alloc_count, "alloc"),
		       counted(b, rep->free_count, "free"));
	else
		printf(": no allocations recorded");
	if (cgtrace_doc_truncated(doc))
		printf("; incomplete: last record cut short (process killed?)");
	else if (!complete)
		printf("; incomplete: spans left open");
	else
		printf("; complete");
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0)
		printf("; %s on disk", cli_bytes(a, (uint64_t)st.st_size, exact));
	putchar('\n');
	for (size_t i = 0; i < rep->n_devices; i++) {
		const struct cgtrace_device_peak *p = &rep->by_device[i];
		/* A device known only from checkpoints has no peak of its own. */
		if (!p->alloc_count && !p->free_count)
			continue;
		char when[160];
		printf("peak %s on %s at %s%s", cli_bytes(a, p->peak_bytes, exact), p->device,
		       cli_ns(b, p->peak_timestamp_ns),
		       cli_moment(when, sizeof(when), rep, &rep->device_moments[i]));
		if (p->capacity_bytes)
			printf(", capacity %s", cli_bytes(a, p->capacity_bytes, exact));
		putchar('\n');
	}
	/* Not for a trace of nothing, which the wrapper tells by its one line. */
	if (cgtrace_doc_records(doc, CGTRACE_KIND_MEMORY))
		print_probe_memory(doc, exact);
	if (cli_capture_note(note, sizeof(note), doc))
		printf("%s\n", note);
	if (cli_inherited_note(note, sizeof(note), doc))
		printf("%s\n", note);
	if (cli_min_bytes_note(note, sizeof(note), doc, exact, CLI_NOTE_BRIEF))
		printf("%s\n", note);
}

static int run_job(int argc, char **argv, const struct summary_args *a)
{
	size_t n;
	char **paths = cli_job_paths_of(argc, argv, &n);
	if (!paths)
		return CLI_FAIL;
	const struct cli_job_opts o = {
	    .jobs = a->jobs ? a->jobs : 1,
	    .fold = a->fold,
	    .json = a->json,
	    .exact = a->exact,
	    .series = a->series,
	};
	int status = cli_job_summary(paths, n, &o);
	free(paths);
	return status;
}

static int run(int argc, char **argv)
{
	struct summary_args a = {.fold = 65536};
	int status;
	if (!cli_parse(&cli_summary, argc, argv, &a, &status))
		return status;
	if (a.json && a.brief)
		return cli_usage_error(&cli_summary, "--brief and --json exclude each other");
	if (a.series && !a.json)
		return cli_usage_error(&cli_summary, "--series goes with --json");
	if (a.job || cli_job_args(argc, argv)) {
		if (a.brief)
			return cli_usage_error(&cli_summary, "--brief takes one TRACE, not a job");
		return run_job(argc, argv, &a);
	}
	const char *path = cli_trace_arg(&cli_summary, argc, argv, &status);
	if (!path)
		return status;
	/* A summary names no allocation site: no stacks are kept. */
	struct cgtrace_doc *doc =
	    cli_load_flags(path, CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_SKIP_STACKS);
	if (!doc)
		return CLI_FAIL;
	struct cgtrace_summary s;
	struct cgtrace_memory_report *rep = NULL;
	if (cgtrace_doc_summary_report(doc, &s, &rep) < 0) {
		fprintf(stderr, "%s: out of memory\n", path);
		cgtrace_doc_free(doc);
		return CLI_FAIL;
	}
	if (a.json)
		status = print_json(doc, &s, rep);
	else if (a.brief)
		print_brief(path, doc, rep, a.exact);
	else
		print_human(path, doc, &s, rep, a.exact);
	cgtrace_memory_report_free(rep);
	cgtrace_doc_free(doc);
	if (!a.json && (fflush(stdout) || ferror(stdout)))
		return CLI_FAIL;
	return status;
}

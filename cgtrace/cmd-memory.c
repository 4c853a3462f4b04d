/* SPDX-License-Identifier: MIT */
/* cgtrace memory: the memory analysis, per device, and what made the peak. */
#include <stdlib.h>
#include <string.h>

#include "cli-pool.h"
#include "cli.h"
#include "job-load.h"
#include "job-text.h"

struct memory_args {
	enum cli_site site;
	bool json, exact, top_given;
	size_t top, jobs;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_memory = {
	.name = "memory",
	.args = "[--json] [--bytes] [--top N] [--site python|native] [--jobs N] TRACE... | DIR",
	.help = "Replays allocations and frees in time order and reports the peak: when,\n"
		"on which device, by category, and the allocations live at that moment\n"
		"(largest first), grouped by the function or op that made them. With\n"
		"recorded call stacks, each allocation's site: the function and line that\n"
		"allocated (docs/symbols.md).\n\n"
		"Several traces, or a folder of them (cgprobe -o DIR/), are one job\n"
		"(docs/jobs.md): each process's report in tree order under a line naming\n"
		"it (rank, pid, host, where it starts on the job's time axis, command;\n"
		"its times are its own), then each physical GPU's bytes of all its\n"
		"processes summed, as summary shows them. --json: {\"processes\": [{path,\n"
		"pid, rank, start_ns, report}], \"gpus\": [...]}.\n\n",
	.label_width = 10,
	.opts = (const struct cli_opt[]){
		{.name = "json", .offset = offsetof(struct memory_args, json),
		 .help = "one JSON object {summary, by_device, peak_breakdown, peak_by_op};\n"
			 "without --top, peak_breakdown lists every allocation live at the peak"},
		CLI_OPT_SITE(struct memory_args, site),
		CLI_OPT_BYTES(struct memory_args, exact),
		{.name = "top", .kind = CLI_OPT_COUNT, .offset = offsetof(struct memory_args, top),
		 .seen = CLI_SEEN(struct memory_args, top_given), .arg = "N",
		 .help = "live allocations listed at the peak (default 20, 0 = all); with\n"
			 "--json it bounds peak_breakdown to the N largest and adds\n"
			 "peak_breakdown_rest {count, bytes}: the allocations left out; with\n"
			 "recorded stacks each entry has stack_id and frames (from the site\n"
			 "outwards: address, function, file, line, module, offset, inlined);\n"
			 "preexisting: true on an allocation live before recording began"},
		CLI_OPT_JOBS(struct memory_args, jobs),
		{0},
	},
	.run = run,
};

static void json_summary(struct cli_jw *w, const struct cgtrace_memory_report *r)
{
	static const struct cli_jw_field counts[] = {
		CLI_JW_U64(struct cgtrace_memory_report, alloc_count),
		CLI_JW_U64(struct cgtrace_memory_report, free_count),
		CLI_JW_U64(struct cgtrace_memory_report, total_alloc_bytes),
		CLI_JW_U64(struct cgtrace_memory_report, peak_bytes),
		CLI_JW_U64(struct cgtrace_memory_report, peak_timestamp_ns),
	};
	cli_jw_begin_object(w);
	cli_jw_u64_fields(w, r, counts, sizeof(counts) / sizeof(counts[0]));
	cli_jw_key_str(w, "peak_device", r->peak_device);
	cli_jw_key(w, "peak_by_category");
	cli_jw_begin_object(w);
	for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
		cli_jw_key_u64(w, cgtrace_category_name((enum cgtrace_category)c),
			       r->peak_by_category[c]);
	cli_jw_end_object(w);
	cli_jw_key_u64(w, "autograd_retained_bytes", r->autograd_retained_bytes);
	cli_json_moment(w, "peak_", &r->peak_moment);
	cli_jw_end_object(w);
}

static void json_device(struct cli_jw *w, const struct cgtrace_device_peak *d,
			const struct cgtrace_moment *m)
{
	static const struct cli_jw_field figures[] = {
		CLI_JW_U64(struct cgtrace_device_peak, capacity_bytes),
		CLI_JW_U64(struct cgtrace_device_peak, peak_bytes),
		CLI_JW_U64(struct cgtrace_device_peak, peak_timestamp_ns),
		CLI_JW_U64(struct cgtrace_device_peak, alloc_count),
		CLI_JW_U64(struct cgtrace_device_peak, free_count),
	};
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "device", d->device);
	cli_jw_u64_fields(w, d, figures, sizeof(figures) / sizeof(figures[0]));
	cli_json_moment(w, "peak_", m);
	cli_jw_end_object(w);
}

static void json_live(struct cli_jw *w, const struct cgtrace_live_alloc *a,
		      struct cli_sites *sites)
{
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "tensor_id", a->tensor_id);
	cli_jw_key_str(w, "span_id", a->span_id);
	cli_jw_key_str(w, "op_name", a->op_name);
	cli_jw_key_u64(w, "bytes", a->bytes);
	cli_jw_key(w, "shape");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < a->ndim; i++)
		cli_jw_u64(w, a->shape[i]);
	cli_jw_end_array(w);
	cli_jw_key_str(w, "dtype", a->dtype);
	cli_jw_key_str(w, "device", a->device);
	cli_jw_key_str(w, "category", cgtrace_category_name(a->category));
	if (sites) {
		cli_jw_key_u64(w, "stack_id", a->stack_id);
		cli_jw_key(w, "frames");
		cli_json_frames(w, cli_sites_stack(sites, a->stack_id), false);
	}
	if (a->preexisting)
		cli_jw_key_bool(w, "preexisting", true);
	cli_jw_end_object(w);
}

/* Every group, whatever --top says: the groups add up to the peak's live set. */
static int json_groups(struct cli_jw *w, const struct cgtrace_memory_report *r)
{
	struct cgtrace_op_group *g;
	size_t n;
	int ret = cgtrace_memory_peak_by_op(r, &g, &n);
	if (ret < 0)
		return ret;
	cli_jw_key(w, "peak_by_op");
	cli_json_op_groups(w, g, n, "op_name");
	cgtrace_op_groups_free(g);
	return 0;
}

/*
 * Without --top (bounded false) every allocation live at the peak is listed:
 * that is the JSON's contract, even when a torch trace holds 300,000 of them.
 * With it, the top largest (0 = all) and then the count and bytes of the
 * rest, so that a bounded list still adds up to the peak's live set.
 */
static void json_report(struct cli_jw *w, const struct cgtrace_memory_report *r, bool bounded,
			size_t top, struct cli_sites *sites)
{
	size_t shown = bounded && top && top < r->n_breakdown ? top : r->n_breakdown;
	/* Past what the report kept (cgtrace_memory_analyze_largest), the rest it summed. */
	uint64_t rest = r->rest_bytes;
	cli_jw_begin_object(w);
	cli_jw_key(w, "summary");
	json_summary(w, r);
	cli_jw_key(w, "by_device");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < r->n_devices; i++)
		json_device(w, &r->by_device[i], &r->device_moments[i]);
	cli_jw_end_array(w);
	cli_jw_key(w, "peak_breakdown");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < shown; i++)
		json_live(w, &r->peak_breakdown[i], sites);
	cli_jw_end_array(w);
	if (bounded) {
		for (size_t i = shown; i < r->n_breakdown; i++)
			rest = rest + r->peak_breakdown[i].bytes < rest
				       ? UINT64_MAX
				       : rest + r->peak_breakdown[i].bytes;
		cli_jw_key(w, "peak_breakdown_rest");
		cli_jw_begin_object(w);
		cli_jw_key_u64(w, "count", r->n_at_peak - shown);
		cli_jw_key_u64(w, "bytes", rest);
		cli_jw_end_object(w);
	}
	if (json_groups(w, r) < 0)
		w->b->err = true;
	cli_jw_end_object(w);
}

static int print_json(const struct cgtrace_memory_report *r, bool bounded, size_t top,
		      struct cli_sites *sites)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	cli_jw_init(&w, &b);
	json_report(&w, r, bounded, top, sites);
	return cli_jw_print(&w);
}

/* Live bytes at the peak per op_name: which call made the peak. */
static void print_groups(const struct cgtrace_memory_report *r, bool exact)
{
	struct cgtrace_op_group *g;
	size_t n;
	if (cgtrace_memory_peak_by_op(r, &g, &n) < 0)
		return;
	char b1[32], b2[32];
	printf("\nLive at the peak by op:\n%-28s %12s %14s\n", "op_name", "allocations", "bytes");
	for (size_t i = 0; i < n; i++)
		printf("%-28s %12s %14s\n", g[i].op_name ? g[i].op_name : "(none)",
		       cli_count(b1, g[i].count), cli_bytes(b2, g[i].bytes, exact));
	cgtrace_op_groups_free(g);
}

static void print_human(const struct cgtrace_doc *doc, const struct cgtrace_memory_report *r,
			bool exact, size_t top, struct cli_sites *sites)
{
	char a[32], b[32], c[32], d[32], e[32], note[192], site[600];
	printf("%s allocs, %s frees, %s allocated in total\n", cli_count(a, r->alloc_count),
	       cli_count(b, r->free_count), cli_bytes(c, r->total_alloc_bytes, exact));
	/* Between the totals and the peak: both leave out what was not recorded. */
	if (cli_min_bytes_note(note, sizeof(note), doc, exact, CLI_NOTE_FULL))
		printf("note: %s\n", note);
	if (cli_inherited_note(note, sizeof(note), doc))
		printf("note: %s\n", note);
	if (!r->peak_bytes) {
		printf("peak: none (no live memory)\n");
		return;
	}
	char when[160];
	printf("peak: %s on %s at %s%s\n", cli_bytes(a, r->peak_bytes, exact), r->peak_device,
	       cli_ns(b, r->peak_timestamp_ns), cli_moment(when, sizeof(when), r, &r->peak_moment));
	printf("  by category:");
	for (int k = 0; k < CGTRACE_CAT_COUNT; k++)
		printf(" %s %s%s", cgtrace_category_name((enum cgtrace_category)k),
		       cli_bytes(a, r->peak_by_category[k], exact), k + 1 < CGTRACE_CAT_COUNT ? "," : "");
	printf("\n  autograd retained: %s\n", cli_bytes(a, r->autograd_retained_bytes, exact));

	printf("\n%-12s %14s %14s %14s %12s %12s\n", "device", "capacity", "peak", "peak at",
	       "allocs", "frees");
	for (size_t i = 0; i < r->n_devices; i++) {
		const struct cgtrace_device_peak *p = &r->by_device[i];
		printf("%-12s %14s %14s %14s %12s %12s\n", p->device,
		       p->capacity_bytes ? cli_bytes(a, p->capacity_bytes, exact) : "-",
		       cli_bytes(b, p->peak_bytes, exact), cli_ns(c, p->peak_timestamp_ns),
		       cli_count(d, p->alloc_count), cli_count(e, p->free_count));
	}
	size_t shown = top && top < r->n_breakdown ? top : r->n_breakdown;
	printf("\nLive at the peak (%zu allocations):\n%14s  %-10s %-10s %-18s %-10s %*s%s\n",
	       r->n_at_peak, "bytes", "device", "category", "op_name", "span", sites ? -18 : 0,
	       "tensor_id", sites ? " site" : "");
	uint64_t rest = r->rest_bytes;
	for (size_t i = 0; i < r->n_breakdown; i++) {
		const struct cgtrace_live_alloc *l = &r->peak_breakdown[i];
		if (i >= shown) {
			rest += l->bytes;
			continue;
		}
		const char *name = "";
		if (sites)
			name = cli_frame_name(site, sizeof(site),
					      cli_alloc_site(sites, l->stack_id, l->preexisting));
		printf("%14s  %-10s %-10s %-18s %-10s %*s%s%s\n", cli_bytes(a, l->bytes, exact),
		       l->device, cgtrace_category_name(l->category), l->op_name ? l->op_name : "-",
		       l->span_id, sites ? -18 : 0, l->tensor_id, sites ? " " : "", name);
	}
	if (shown < r->n_at_peak)
		printf("%14s  ... and %s more allocations (--top 0 lists all)\n",
		       cli_bytes(a, rest, exact), cli_count(b, r->n_at_peak - shown));
	print_groups(r, exact);
}

/* A trace read for its report: the document, the report, its sites when it has stacks. */
struct loaded {
	struct cgtrace_doc *doc;
	struct cgtrace_memory_report *rep;
	struct cli_sites sites;
	bool named;
};

/* The report of doc, which l then owns: CLI_OK, or CLI_FAIL printed with nothing held. */
static int load(struct loaded *l, struct cgtrace_doc *doc, const char *path,
		const struct memory_args *a)
{
	*l = (struct loaded){.doc = doc};
	/* A list of the top largest needs no array of every allocation at the peak. */
	size_t largest = a->json && !a->top_given ? 0 : a->top;
	if (cgtrace_memory_analyze_largest(l->doc, largest, &l->rep) < 0) {
		fprintf(stderr, "%s: out of memory\n", cli_path_name(path));
		cgtrace_doc_free(l->doc);
		return CLI_FAIL;
	}
	/* Sites only where the trace has stacks: the output of one without stays as it was. */
	l->named = cgtrace_doc_stack_count(l->doc) > 0;
	if (l->named && cli_sites_attach(&l->sites, l->doc, path) != CLI_OK) {
		cgtrace_memory_report_free(l->rep);
		cgtrace_doc_free(l->doc);
		return CLI_FAIL;
	}
	return CLI_OK;
}

static void unload(struct loaded *l)
{
	cli_sites_close(&l->sites);
	cgtrace_memory_report_free(l->rep);
	cgtrace_doc_free(l->doc);
}

/* ---- a job: each process's report in tree order, then the physical GPUs ---- */

struct job_run {
	const struct memory_args *a;
	const struct cgtrace_job *j;
	struct cli_jw w; /* --json */
	struct cli_buf b;
	int status;
};

struct job_state {
	struct loaded l;
	bool ok;
	char line[2048]; /* the read's error or warning */
};

/* The job's item k is the process tree[k]. */
static const struct cgtrace_job_process *job_process(const struct job_run *r, size_t k)
{
	return &r->j->processes[r->j->tree[k]];
}

static int job_read(void *user, size_t k, void **out)
{
	struct job_run *r = user;
	const struct cgtrace_job_process *p = job_process(r, k);
	struct cgtrace_doc *doc = NULL;
	struct job_state *st = calloc(1, sizeof(*st));
	*out = st;
	/* An unreadable trace's error is the job's, said once at the end. */
	if (!st || p->error)
		return CLI_FAIL;
	if (cgtrace_doc_read_flags(p->path, NULL, CGTRACE_READ_STREAM_MEMORY, &doc, st->line,
				   sizeof(st->line)) < 0)
		return CLI_FAIL;
	st->ok = load(&st->l, doc, p->path, r->a) == CLI_OK;
	return st->ok ? CLI_OK : CLI_FAIL;
}

/* "== rank 1 (pid 101) on n1, from 4.000 us of the job: python3 train.py" */
static void job_heading(const struct cgtrace_job_process *p, bool first)
{
	char who[64], at[32], cmd[CLI_JOB_CMD_COLS + 64];
	printf("%s== %s on %s, from %s of the job: %s\n", first ? "" : "\n",
	       cli_job_who(who, sizeof(who), &p->process),
	       p->process.host[0] ? p->process.host : "?", cli_ns(at, p->start_ns),
	       cli_job_command(cmd, sizeof(cmd), &p->process));
}

static void job_fold(void *user, size_t k, void *state, int status)
{
	struct job_run *r = user;
	struct job_state *st = state;
	const struct cgtrace_job_process *p = job_process(r, k);
	if (st && st->line[0])
		fprintf(stderr, "%s\n", st->line);
	if (status != CLI_OK) {
		r->status = CLI_FAIL;
		if (r->a->json) {
			cli_jw_begin_object(&r->w);
			cli_jw_key_str(&r->w, "path", p->path);
			cli_jw_key_str(&r->w, "error", p->error ? p->message
						       : st && st->line[0] ? st->line
									   : "unreadable");
			cli_jw_end_object(&r->w);
		}
	} else if (r->a->json) {
		cli_jw_begin_object(&r->w);
		cli_jw_key_str(&r->w, "path", p->path);
		cli_job_json_ids(&r->w, &p->process);
		cli_jw_key_u64(&r->w, "start_ns", p->start_ns);
		cli_jw_key(&r->w, "report");
		json_report(&r->w, st->l.rep, r->a->top_given, r->a->top,
			    st->l.named ? &st->l.sites : NULL);
		cli_jw_end_object(&r->w);
		/* A report at a time: the job's JSON streams rather than growing with its ranks. */
		if (!r->b.err && fwrite(r->b.p, 1, r->b.len, stdout) != r->b.len)
			r->b.err = true;
		r->b.len = 0;
	} else {
		job_heading(p, k == 0);
		print_human(st->l.doc, st->l.rep, r->a->exact, r->a->top,
			    st->l.named ? &st->l.sites : NULL);
	}
	if (st && st->ok)
		unload(&st->l);
	free(st);
}

static int run_job(int argc, char **argv, const struct memory_args *a)
{
	size_t n;
	char **paths = cli_job_paths_of(argc, argv, &n);
	if (!paths)
		return CLI_FAIL;
	struct cgtrace_job *j = cli_job_load(paths, n, a->jobs, CGTRACE_READ_SKIP_STACKS);
	free(paths);
	if (!j)
		return CLI_FAIL;
	struct job_run r = {.a = a, .j = j};
	if (a->json) {
		cli_jw_init(&r.w, &r.b);
		cli_jw_begin_object(&r.w);
		cli_jw_key(&r.w, "processes");
		cli_jw_begin_array(&r.w);
	}
	static const struct cli_pool_ops ops = {job_read, job_fold};
	cli_pool_run(j->n_processes, a->jobs, &ops, &r);
	int status = CLI_OK;
	if (a->json) {
		cli_jw_end_array(&r.w);
		cli_jw_key(&r.w, "gpus");
		cli_job_json_gpus(&r.w, j);
		cli_jw_end_object(&r.w);
		status = cli_jw_print(&r.w);
	} else {
		cli_job_print_gpus(j, a->exact);
		if (fflush(stdout) || ferror(stdout))
			status = CLI_FAIL;
	}
	/* The unreadable traces, said once each; every other process was answered. */
	if (cli_job_errors(j) != CLI_OK || r.status != CLI_OK)
		status = CLI_FAIL;
	cgtrace_job_free(j);
	return status;
}

static int run(int argc, char **argv)
{
	struct memory_args a = {.top = 20};
	int status;
	if (!cli_parse(&cli_memory, argc, argv, &a, &status))
		return status;
	cli_site_mode = a.site;
	if (cli_job_args(argc, argv))
		return run_job(argc, argv, &a);
	const char *path = cli_trace_arg(&cli_memory, argc, argv, &status);
	if (!path)
		return status;
	struct cgtrace_doc *doc = cli_load_flags(path, CGTRACE_READ_STREAM_MEMORY);
	struct loaded l;
	if (!doc || load(&l, doc, path, &a) != CLI_OK)
		return CLI_FAIL;
	if (a.json)
		status = print_json(l.rep, a.top_given, a.top, l.named ? &l.sites : NULL);
	else
		print_human(l.doc, l.rep, a.exact, a.top, l.named ? &l.sites : NULL);
	unload(&l);
	if (!a.json && (fflush(stdout) || ferror(stdout)))
		return CLI_FAIL;
	return status;
}

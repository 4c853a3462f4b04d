/* SPDX-License-Identifier: MIT */
/*
 * cgtrace export: re-emits a trace as JSONL or in the compact encoding, in
 * file order (streaming) or canonical order; or writes it for other tools:
 * folded stacks, a Perfetto trace, a massif file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "export-massif.h"
#include "export-perfetto-job.h"
#include "export-perfetto.h"

/* Strings checked once all are read: the checks depend on --format. */
struct export_args {
	const char *format, *order, *output, *by, *device;
	const char *level, *block_raw, *buckets, *max_spans;
	bool stats, strict;
};

static const struct cli_choice formats[] = {
	{"jsonl", "one JSON record a line (the default)"},
	{"compact", "the compact encoding (docs/compact-format.md): memory,\n"
		    "span and device checkpoint records packed into a few\n"
		    "bytes, the rest as JSONL text, in zstd blocks; never\n"
		    "written to a terminal. Reading it back and exporting as\n"
		    "JSONL gives the JSONL export's bytes"},
	{"folded", "folded stacks for flamegraph.pl, speedscope or Perfetto:\n"
		   "one `frame;frame;frame VALUE` line per call stack, root\n"
		   "first, down to the allocation site (docs/symbols.md)"},
	{"perfetto", "Chrome Trace Event JSON for ui.perfetto.dev (Open trace\n"
		     "file) or chrome://tracing: spans on their threads, live\n"
		     "bytes by category per device as counters (each bucket at\n"
		     "its highest instant), device checkpoints, the peaks and\n"
		     "out-of-memory failures, a slice per training update;\n"
		     "bounded in size (docs/perfetto.md)"},
	{"massif", "valgrind massif's format for ms_print and massif-visualizer:\n"
		   "one device's live bytes as about 100 snapshots, its peak\n"
		   "detailed by call stack, or by op_name and span without\n"
		   "stacks (docs/massif.md)"},
	{NULL, NULL},
};

/* Their indices in formats. */
enum { FMT_JSONL, FMT_COMPACT, FMT_FOLDED, FMT_PERFETTO, FMT_MASSIF };

static const struct cli_choice orders[] = {
	{"stream", "records in file order, read one at a time: memory stays\n"
		   "bounded whatever the trace's length (the default)"},
	{"canonical", "the reconstructed document: meta, spans by id (start, then\n"
		      "end when closed), ops, tensors, memory, device memory,\n"
		      "gradients, edges, then cgprobe extension records; derived\n"
		      "storage sizes are written out"},
	{NULL, NULL},
};

enum { ORDER_STREAM, ORDER_CANONICAL };

#define STR_OPT(long_name, member, arg_name, text)                                            \
	{.name = long_name, .kind = CLI_OPT_STR, .offset = offsetof(struct export_args, member), \
	 .arg = arg_name, .help = text}

static int run(int argc, char **argv);

const struct cli_cmd cli_export = {
	.name = "export",
	.args = "[--format jsonl|compact|folded|perfetto|massif] [--order stream|canonical] "
		"[--level N] [--stats] [--strict] [--by NAME] [--device D] [--buckets N] "
		"[--max-spans N] [-o FILE] TRACE (--format perfetto: TRACE... | DIR)",
	.help = "Writes the trace as JSONL, each record in the format's field order and\n"
		"spelling (a trace cgprobe wrote comes out byte for byte in stream order),\n"
		"or in the compact binary encoding. Unknown fields are dropped; a .zst\n"
		"trace comes out plain. Or writes it for other tools: folded stacks, a\n"
		"Perfetto trace, a massif file.\n\n"
		"Several traces, or a folder of them (cgprobe -o DIR/), are one job\n"
		"(docs/jobs.md), which --format perfetto writes as one file: a process\n"
		"per process on the job's time axis, a counter per physical GPU of\n"
		"every process's bytes on it summed (docs/perfetto.md).\n\n",
	.label_width = 17,
	.opts = (const struct cli_opt[]){
		{.name = "format", .kind = CLI_OPT_STR, .offset = offsetof(struct export_args, format),
		 .choices = formats},
		STR_OPT("by", by, "NAME",
			"folded: the value of a stack, as cgtrace top ranks: peak\n"
			"(bytes held at the device's peak, the default), total,\n"
			"count, leaked or temporary"),
		STR_OPT("device", device, "D",
			"folded: only device D's stacks (else a trace of several\n"
			"devices gets the device as the root frame); massif: the\n"
			"device written (default: the one that peaked)"),
		STR_OPT("buckets", buckets, "N",
			"perfetto: time buckets of the counters (default 10000, at\n"
			"most 100000); two samples per bucket and device at most;\n"
			"a job: of each process, and of each GPU's sum"),
		STR_OPT("max-spans", max_spans, "N",
			"perfetto: spans kept, the longest (default 100000); the\n"
			"file's metadata says so when some are left out; a job:\n"
			"of each process"),
		STR_OPT("level", level, "N", "compact: the zstd level (default 1; 0: stored blocks)"),
		{.name = "stats", .offset = offsetof(struct export_args, stats),
		 .help = "compact: print on stderr, per field, the bytes before zstd\n"
			 "and what the field costs after it (the output's size less\n"
			 "its size with that field's values all 0); ten times the work"},
		STR_OPT("block-raw", block_raw, "N",
			"compact: end blocks at N raw bytes (default 4 MiB; for tests)"),
		{.name = "strict", .offset = offsetof(struct export_args, strict),
		 .help = "jsonl: strict trace/6, without the extension fields and\n"
			 "kinds (cgprobe_* stacks, modules and device identities,\n"
			 "managed, oom_request_bytes; cgprobe_device records)"},
		{.name = "order", .kind = CLI_OPT_STR, .offset = offsetof(struct export_args, order),
		 .choices = orders},
		{.name = "output", .short_name = 'o', .kind = CLI_OPT_STR, .label = "-o FILE",
		 .offset = offsetof(struct export_args, output),
		 .help = "write to FILE instead of standard output"},
		{0},
	},
	.help_tail = "\n" CLI_OUT_HELP,
	.run = run,
};

/* What to write: JSONL, or compact with these options (stats printed when asked). */
struct how {
	bool compact;
	unsigned jsonl_flags; /* CGTRACE_EXPORT_* */
	struct cgtrace_compact_options copts;
};

/* The output's name in messages. */
static const char *out_name(const struct cli_out *o)
{
	return o->f == stdout ? "<stdout>" : o->path;
}

static void print_stats(const struct cgtrace_compact_stats *st, int level)
{
	double recs = st->records ? (double)st->records : 1;
	fprintf(stderr, "compact: %" PRIu64 " records, %" PRIu64 " blocks, zstd level %d\n",
		st->records, st->blocks, level);
	fprintf(stderr, "%-10s %14s %9s %14s %9s\n", "field", "raw bytes", "raw/rec", "zstd bytes",
		"zstd/rec");
	for (unsigned f = 0; f < CGTRACE_COMPACT_FIELDS; f++) {
		/* What the field costs compressed: the output less the output without it. */
		int64_t cost = (int64_t)st->stored_bytes - (int64_t)st->ablated_bytes[f];
		fprintf(stderr, "%-10s %14" PRIu64 " %9.3f %14" PRId64 " %9.3f\n",
			cgtrace_compact_field_name(f), st->field_raw_bytes[f],
			(double)st->field_raw_bytes[f] / recs, cost, (double)cost / recs);
	}
	fprintf(stderr, "%-10s %14" PRIu64 " %9.3f %14" PRIu64 " %9.3f\n", "total", st->raw_bytes,
		(double)st->raw_bytes / recs, st->stored_bytes, (double)st->stored_bytes / recs);
}

/* A compact trace is binary: it goes to a file or a pipe, never to a terminal. */
static bool refuse_terminal(const struct how *how, int fd)
{
	if (!how->compact || !isatty(fd))
		return false;
	fprintf(stderr, "cgtrace export: the compact encoding is binary and the output is a "
			"terminal; use -o FILE or redirect the output\n");
	return true;
}

static int export_canonical(const char *path, const char *output, const struct how *how)
{
	struct cgtrace_doc *doc = cli_load(path);
	if (!doc)
		return CLI_FAIL;
	struct cli_out o;
	if (cli_out_open(&o, output) != CLI_OK) {
		cgtrace_doc_free(doc);
		return CLI_FAIL;
	}
	int fd = fileno(o.f);
	if (refuse_terminal(how, fd)) {
		cli_out_close(&o, false);
		cgtrace_doc_free(doc);
		return CLI_FAIL;
	}
	struct cgtrace_compact_stats st;
	int ret = how->compact ? cgtrace_doc_export_compact_opts(doc, fd, &how->copts, &st)
			       : cgtrace_doc_export_jsonl_flags(doc, fd, how->jsonl_flags);
	if (ret == 0 && how->copts.stats)
		print_stats(&st, how->copts.zstd_level);
	if (ret < 0)
		fprintf(stderr, "%s: %s\n", out_name(&o), strerror(-ret));
	int status = cli_out_close(&o, ret == 0);
	cgtrace_doc_free(doc);
	return ret < 0 ? CLI_FAIL : status;
}

/*
 * The output is written while the trace is read, so a broken trace is
 * only found part-way: the file it was to replace is left as it was.
 */
static int export_stream(const char *path, const char *output, const struct how *how)
{
	struct cgtrace_reader *r;
	char err[1024];
	int ret = cgtrace_reader_open_err(&r, path, NULL, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s\n", err);
		return CLI_FAIL;
	}
	struct cli_out o;
	if (cli_out_open(&o, output) != CLI_OK) {
		cgtrace_reader_close(r);
		return CLI_FAIL;
	}
	int fd = fileno(o.f);
	if (refuse_terminal(how, fd)) {
		cli_out_close(&o, false);
		cgtrace_reader_close(r);
		return CLI_FAIL;
	}
	struct cgtrace_compact_stats st;
	ret = how->compact ? cgtrace_reader_export_compact_opts(r, fd, &how->copts, &st)
			   : cgtrace_reader_export_jsonl_flags(r, fd, how->jsonl_flags);
	if (ret == 0 && how->copts.stats)
		print_stats(&st, how->copts.zstd_level);
	/* A message with success is the warning of a cut-off last line. */
	const char *msg = cgtrace_reader_message(r);
	if (msg[0])
		fprintf(stderr, "%s\n", msg);
	else if (ret < 0)
		fprintf(stderr, "%s: %s\n", out_name(&o), strerror(-ret));
	int status = cli_out_close(&o, ret == 0);
	cgtrace_reader_close(r);
	return ret < 0 ? CLI_FAIL : status;
}

/* A frame as flame graphs want it: no ';' (the separator) and no line break. */
static void folded_frame(struct cli_buf *b, const struct cgtrace_frame *f)
{
	char name[600];
	/* A Python frame's line is what its author looks for: "step (train.py:36)". */
	bool python = (f->address & CGTRACE_PY_FRAME) && !f->module && f->file;
	if (f->function && !python)
		snprintf(name, sizeof(name), "%s", f->function);
	else
		cli_frame_name(name, sizeof(name), f);
	for (char *p = name; *p; p++)
		if (*p == ';' || *p == '\n' || *p == '\r')
			*p = ':';
	cli_buf_puts(b, name);
}

static int line_cmp(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;
	size_t nx = strrchr(*x, ' ') - *x, ny = strrchr(*y, ' ') - *y;
	int c = memcmp(*x, *y, nx < ny ? nx : ny);
	return c ? c : (nx > ny) - (nx < ny);
}

/* Lines of one stack each, then those naming the same frames summed (two return addresses on a line). */
static int folded_lines(struct cli_sites *s, const struct cli_site_row *rows, size_t n,
			enum cli_by by, bool root_device,
			int fd)
{
	char **lines = calloc(n ? n : 1, sizeof(*lines));
	struct cli_buf out = {0};
	if (!lines)
		return -ENOMEM;
	int ret = 0;
	for (size_t i = 0; i < n && ret == 0; i++) {
		struct cli_buf b = {0};
		const struct cgtrace_resolved_stack *st = cli_sites_stack(s, rows[i].stack_id);
		if (root_device)
			cli_buf_puts(&b, rows[i].device);
		for (size_t k = st ? st->n_frames : 0; st && k-- > st->site;) {
			if (!cli_frame_shown(st, k, false))
				continue;
			if (b.len)
				cli_buf_putc(&b, ';');
			folded_frame(&b, st->frames[k]);
		}
		if (!st || !st->n_frames) {
			char none[64];
			if (b.len)
				cli_buf_putc(&b, ';');
			cli_buf_puts(&b, cli_frame_name(none, sizeof(none), rows[i].site));
		}
		char v[24];
		snprintf(v, sizeof(v), " %" PRIu64, cli_by_value(&rows[i].sum, by));
		cli_buf_puts(&b, v);
		cli_buf_putc(&b, '\0');
		if (b.err)
			ret = -ENOMEM;
		lines[i] = b.p;
	}
	if (ret == 0)
		qsort(lines, n, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < n && ret == 0;) {
		size_t j = i;
		uint64_t sum = 0;
		for (; j < n && line_cmp(&lines[i], &lines[j]) == 0; j++) {
			uint64_t v = strtoull(strrchr(lines[j], ' ') + 1, NULL, 10);
			sum = sum + v < sum ? UINT64_MAX : sum + v;
		}
		char v[24];
		cli_buf_put(&out, lines[i], (size_t)(strrchr(lines[i], ' ') - lines[i]));
		cli_buf_put(&out, v, (size_t)snprintf(v, sizeof(v), " %" PRIu64 "\n", sum));
		i = j;
	}
	if (out.err)
		ret = -ENOMEM;
	for (size_t i = 0; i < out.len && ret == 0;) {
		ssize_t w = write(fd, out.p + i, out.len - i);
		if (w < 0 && errno != EINTR)
			ret = -errno;
		else if (w > 0)
			i += (size_t)w;
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	cli_buf_fini(&out);
	return ret;
}

static int export_folded(const char *path, const char *output, enum cli_by by, const char *device)
{
	struct cli_sites s;
	struct cli_site_row *rows;
	size_t n;
	if (cli_sites_open_rows(&s, path, device, true, by, &rows, &n) != CLI_OK)
		return CLI_FAIL;
	bool several = s.several_devices;
	struct cli_out o;
	int status = cli_out_open(&o, output);
	if (status == CLI_OK) {
		int ret = folded_lines(&s, rows, n, by, several && !device, fileno(o.f));
		if (ret < 0)
			fprintf(stderr, "%s: %s\n", out_name(&o), strerror(-ret));
		status = cli_out_close(&o, ret == 0);
	}
	free(rows);
	cli_sites_close(&s);
	return status;
}

/* A whole decimal number in [lo, hi]. */
static bool parse_num(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* Several traces, or a folder of them: one Perfetto file of the job. */
static int export_job(int argc, char **argv, const char *output, size_t buckets,
		      size_t max_spans)
{
	char **paths, err[512];
	size_t n;
	if (cgtrace_job_paths((const char *const *)argv + optind, (size_t)(argc - optind), &paths, &n,
			      err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return CLI_FAIL;
	}
	int status = cli_export_perfetto_job(paths, n, output, buckets, max_spans);
	free(paths);
	return status;
}

static int run(int argc, char **argv)
{
	struct export_args a = {.format = "jsonl"};
	int status;
	if (!cli_parse(&cli_export, argc, argv, &a, &status))
		return status;
	int format = cli_choice_find(formats, a.format);
	if (format < 0)
		return cli_usage_error(
		    &cli_export,
		    "unknown format '%s' (supported: jsonl, compact, folded, perfetto, massif)",
		    a.format);
	struct how how = {
	    .compact = format == FMT_COMPACT,
	    .jsonl_flags = a.strict ? CGTRACE_EXPORT_STRICT : 0,
	    .copts = {.zstd_level = 1, .stats = a.stats},
	};
	bool folded = format == FMT_FOLDED;
	bool perfetto = format == FMT_PERFETTO, massif = format == FMT_MASSIF;
	long long v;
	if (format != FMT_JSONL && how.jsonl_flags)
		return cli_usage_error(&cli_export, "--strict goes with --format jsonl");
	if (!folded && a.by)
		return cli_usage_error(&cli_export, "--by goes with --format folded");
	if (!folded && !massif && a.device)
		return cli_usage_error(&cli_export, "--device goes with --format folded or massif");
	if (!perfetto && (a.buckets || a.max_spans))
		return cli_usage_error(&cli_export,
				       "--buckets and --max-spans go with --format perfetto");
	if ((folded || perfetto || massif) && a.order)
		return cli_usage_error(&cli_export, "--order goes with --format jsonl or compact");
	size_t n_buckets = CLI_PERFETTO_BUCKETS, n_spans = CLI_PERFETTO_MAX_SPANS;
	if (a.buckets &&
	    (!cli_count_arg(a.buckets, &n_buckets) || n_buckets < 1 || n_buckets > 100000))
		return cli_usage_error(&cli_export, "--buckets: '%s' is not 1 to 100000", a.buckets);
	if (a.max_spans && !cli_count_arg(a.max_spans, &n_spans))
		return cli_usage_error(&cli_export, "--max-spans: '%s' is not a count", a.max_spans);
	enum cli_by by = CLI_BY_PEAK;
	if (a.by && !cli_by_parse(a.by, &by))
		return cli_usage_error(&cli_export, "--by: '%s' is not one of %s", a.by, CLI_BY_NAMES);
	if (!how.compact && (a.level || a.block_raw || how.copts.stats))
		return cli_usage_error(&cli_export,
				       "--level, --stats and --block-raw go with --format compact");
	if (a.level) {
		if (!parse_num(a.level, 0, 22, &v))
			return cli_usage_error(&cli_export, "--level: '%s' is not 0 to 22", a.level);
		how.copts.zstd_level = (int)v;
	}
	if (a.block_raw) {
		if (!parse_num(a.block_raw, 1, 64ll << 20, &v))
			return cli_usage_error(&cli_export, "--block-raw: '%s' is not 1 to 64 MiB",
					       a.block_raw);
		how.copts.block_raw = (size_t)v;
	}
	int order = a.order ? cli_choice_find(orders, a.order) : ORDER_STREAM;
	if (order < 0)
		return cli_usage_error(&cli_export,
				       "unknown order '%s' (supported: stream, canonical)", a.order);
	/* The other formats are of one trace: a folder is still no trace to them. */
	if (perfetto && cli_job_args(argc, argv))
		return export_job(argc, argv, a.output, n_buckets, n_spans);
	const char *path = cli_trace_arg(&cli_export, argc, argv, &status);
	if (!path)
		return status;
	if (folded)
		return export_folded(path, a.output, by, a.device);
	if (perfetto)
		return cli_export_perfetto(path, a.output, n_buckets, n_spans);
	if (massif)
		return cli_export_massif(path, a.output, a.device);
	/* Before the trace is read: a canonical export reads it whole first. */
	if (!a.output && refuse_terminal(&how, STDOUT_FILENO))
		return CLI_USAGE;
	return order == ORDER_STREAM ? export_stream(path, a.output, &how)
				     : export_canonical(path, a.output, &how);
}

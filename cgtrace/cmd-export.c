/* SPDX-License-Identifier: MIT */
/*
 * cgtrace export: re-emits a trace as JSONL or in the compact encoding, in
 * file order (streaming) or canonical order.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int run(int argc, char **argv);

const struct cli_cmd cli_export = {
	.name = "export",
	.args = "[--format jsonl|compact] [--order stream|canonical] [--level N] [--stats] "
		"[--strict] [-o FILE] TRACE",
	.help = "Writes the trace as JSONL, each record in the format's field order and\n"
		"spelling (a trace cgprobe wrote comes out byte for byte in stream order),\n"
		"or in the compact binary encoding. Unknown fields are dropped; a .zst\n"
		"trace comes out plain.\n\n"
		"  --format jsonl   one JSON record a line (the default)\n"
		"  --format compact the compact encoding (docs/compact-format.md): memory,\n"
		"                   span and device checkpoint records packed into a few\n"
		"                   bytes, the rest as JSONL text, in zstd blocks; never\n"
		"                   written to a terminal. Reading it back and exporting as\n"
		"                   JSONL gives the JSONL export's bytes\n"
		"  --level N        compact: the zstd level (default 1; 0: stored blocks)\n"
		"  --stats          compact: print on stderr, per field, the bytes before zstd\n"
		"                   and what the field costs after it (the output's size less\n"
		"                   its size with that field's values all 0); ten times the work\n"
		"  --block-raw N    compact: end blocks at N raw bytes (default 4 MiB; for tests)\n"
		"  --strict         jsonl: strict trace/6, without the extension fields and\n"
		"                   kinds (cgprobe_* stacks, modules and device identities,\n"
		"                   managed, oom_request_bytes; cgprobe_device records)\n"
		"  --order stream   records in file order, read one at a time: memory stays\n"
		"                   bounded whatever the trace's length (the default)\n"
		"  --order canonical\n"
		"                   the reconstructed document: meta, spans by id (start, then\n"
		"                   end when closed), ops, tensors, memory, device memory,\n"
		"                   gradients, edges, then cgprobe extension records; derived\n"
		"                   storage sizes are written out\n"
		"  -o FILE          write to FILE (created, never overwritten; removed again\n"
		"                   when the trace turns out broken) instead of stdout\n",
	.run = run,
};

/* What to write: JSONL, or compact with these options (stats printed when asked). */
struct how {
	bool compact;
	unsigned jsonl_flags; /* CGTRACE_EXPORT_* */
	struct cgtrace_compact_options copts;
};

static int open_output(const char *output)
{
	if (!output)
		return STDOUT_FILENO;
	int fd = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		fprintf(stderr, "%s: %s\n", output, strerror(errno));
	return fd;
}

/* Closes the output; 0, or -1 with the error printed. */
static int close_output(const char *output, int fd)
{
	if (output && close(fd) < 0) {
		fprintf(stderr, "%s: %s\n", output, strerror(errno));
		return -1;
	}
	return 0;
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
	int fd = open_output(output);
	if (fd < 0 || refuse_terminal(how, fd)) {
		cgtrace_doc_free(doc);
		return CLI_FAIL;
	}
	struct cgtrace_compact_stats st;
	int ret = how->compact ? cgtrace_doc_export_compact_opts(doc, fd, &how->copts, &st)
			       : cgtrace_doc_export_jsonl_flags(doc, fd, how->jsonl_flags);
	if (ret == 0 && how->copts.stats)
		print_stats(&st, how->copts.zstd_level);
	if (ret < 0)
		fprintf(stderr, "%s: %s\n", output ? output : "<stdout>", strerror(-ret));
	if (close_output(output, fd) < 0)
		ret = -1;
	cgtrace_doc_free(doc);
	return ret < 0 ? CLI_FAIL : CLI_OK;
}

/*
 * The output is written while the trace is read, so a broken trace is
 * only found part-way: a FILE this run created is removed again then.
 */
static int export_stream(const char *path, const char *output, const struct how *how)
{
	struct cgtrace_reader *r;
	int ret = cgtrace_reader_open(&r, path, NULL);
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", strcmp(path, "-") == 0 ? "<stdin>" : path,
			strerror(-ret));
		return CLI_FAIL;
	}
	int fd = open_output(output);
	if (fd < 0 || refuse_terminal(how, fd)) {
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
		fprintf(stderr, "%s: %s\n", output ? output : "<stdout>", strerror(-ret));
	if (close_output(output, fd) < 0)
		ret = -1;
	if (ret < 0 && output)
		unlink(output);
	cgtrace_reader_close(r);
	return ret < 0 ? CLI_FAIL : CLI_OK;
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

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'}, {"order", required_argument, NULL, 'r'},
	    {"output", required_argument, NULL, 'o'}, {"level", required_argument, NULL, 'l'},
	    {"stats", no_argument, NULL, 's'},        {"block-raw", required_argument, NULL, 'b'},
	    {"strict", no_argument, NULL, 'S'},       {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *format = "jsonl", *order = "stream", *output = NULL;
	const char *level = NULL, *block_raw = NULL;
	struct how how = {.copts = {.zstd_level = 1}};
	long long v;
	int c, status = CLI_OK;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'r':
			order = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'l':
			level = optarg;
			break;
		case 's':
			how.copts.stats = true;
			break;
		case 'b':
			block_raw = optarg;
			break;
		case 'S':
			how.jsonl_flags |= CGTRACE_EXPORT_STRICT;
			break;
		case 'h':
			cli_print_help(&cli_export, stdout);
			return CLI_OK;
		default:
			return cli_usage_error(&cli_export, "unknown option");
		}
	}
	how.compact = strcmp(format, "compact") == 0;
	if (!how.compact && strcmp(format, "jsonl") != 0)
		return cli_usage_error(&cli_export,
				       "unknown format '%s' (supported: jsonl, compact)", format);
	if (how.compact && how.jsonl_flags)
		return cli_usage_error(&cli_export, "--strict goes with --format jsonl");
	if (!how.compact && (level || block_raw || how.copts.stats))
		return cli_usage_error(&cli_export,
				       "--level, --stats and --block-raw go with --format compact");
	if (level) {
		if (!parse_num(level, 0, 22, &v))
			return cli_usage_error(&cli_export, "--level: '%s' is not 0 to 22", level);
		how.copts.zstd_level = (int)v;
	}
	if (block_raw) {
		if (!parse_num(block_raw, 1, 64ll << 20, &v))
			return cli_usage_error(&cli_export, "--block-raw: '%s' is not 1 to 64 MiB",
					       block_raw);
		how.copts.block_raw = (size_t)v;
	}
	bool stream = strcmp(order, "stream") == 0;
	if (!stream && strcmp(order, "canonical") != 0)
		return cli_usage_error(&cli_export,
				       "unknown order '%s' (supported: stream, canonical)", order);
	const char *path = cli_trace_arg(&cli_export, argc, argv, &status);
	if (!path)
		return status;
	/* Before the trace is read: a canonical export reads it whole first. */
	if (!output && refuse_terminal(&how, STDOUT_FILENO))
		return CLI_USAGE;
	return stream ? export_stream(path, output, &how) : export_canonical(path, output, &how);
}

/* SPDX-License-Identifier: MIT */
/* cgtrace export: re-emits a trace as JSONL, in file order (streaming) or canonical order. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int run(int argc, char **argv);

const struct cli_cmd cli_export = {
	.name = "export",
	.args = "[--format jsonl] [--order stream|canonical] [-o FILE] TRACE",
	.help = "Writes the trace as JSONL, each record in the format's field order and\n"
		"spelling (a trace cgprobe wrote comes out byte for byte in stream order).\n"
		"Unknown fields are dropped; a .zst trace comes out plain.\n\n"
		"  --format jsonl   the output format (jsonl, the default, is the one there is)\n"
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

static int export_canonical(const char *path, const char *output)
{
	struct cgtrace_doc *doc = cli_load(path);
	if (!doc)
		return CLI_FAIL;
	int fd = open_output(output);
	if (fd < 0) {
		cgtrace_doc_free(doc);
		return CLI_FAIL;
	}
	int ret = cgtrace_doc_export_jsonl(doc, fd);
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
static int export_stream(const char *path, const char *output)
{
	struct cgtrace_reader *r;
	int ret = cgtrace_reader_open(&r, path, NULL);
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", strcmp(path, "-") == 0 ? "<stdin>" : path,
			strerror(-ret));
		return CLI_FAIL;
	}
	int fd = open_output(output);
	if (fd < 0) {
		cgtrace_reader_close(r);
		return CLI_FAIL;
	}
	ret = cgtrace_reader_export_jsonl(r, fd);
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

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'},
		{"order", required_argument, NULL, 'r'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *format = "jsonl", *order = "stream", *output = NULL;
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
		case 'h':
			cli_print_help(&cli_export, stdout);
			return CLI_OK;
		default:
			return cli_usage_error(&cli_export, "unknown option");
		}
	}
	if (strcmp(format, "jsonl") != 0)
		return cli_usage_error(&cli_export, "unknown format '%s' (supported: jsonl)",
				       format);
	bool stream = strcmp(order, "stream") == 0;
	if (!stream && strcmp(order, "canonical") != 0)
		return cli_usage_error(&cli_export,
				       "unknown order '%s' (supported: stream, canonical)", order);
	const char *path = cli_trace_arg(&cli_export, argc, argv, &status);
	if (!path)
		return status;
	return stream ? export_stream(path, output) : export_canonical(path, output);
}

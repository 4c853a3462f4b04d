/* SPDX-License-Identifier: MIT */
/* cgtrace export: re-emits the reconstructed document. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int run(int argc, char **argv);

const struct cli_cmd cli_export = {
	.name = "export",
	.args = "--format jsonl [-o FILE] TRACE",
	.help = "Writes the reconstructed document as JSONL in canonical order: meta, spans\n"
		"by id (start, then end when closed), ops, tensors, memory, device memory,\n"
		"gradients, edges, then cgprobe extension records. Derived storage sizes are\n"
		"written out; unknown fields are dropped. A .zst trace comes out plain.\n\n"
		"  --format jsonl  the output format (jsonl is the one there is)\n"
		"  -o FILE         write to FILE (created, never overwritten) instead of stdout\n",
	.run = run,
};

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *format = NULL, *output = NULL;
	int c, status = CLI_OK;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
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
	if (!format)
		return cli_usage_error(&cli_export, "missing --format");
	if (strcmp(format, "jsonl") != 0)
		return cli_usage_error(&cli_export, "unknown format '%s' (supported: jsonl)",
				       format);
	const char *path = cli_trace_arg(&cli_export, argc, argv, &status);
	if (!path)
		return status;
	struct cgtrace_doc *doc = cli_load(path);
	if (!doc)
		return CLI_FAIL;
	int fd = STDOUT_FILENO;
	if (output) {
		fd = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0) {
			fprintf(stderr, "%s: %s\n", output, strerror(errno));
			cgtrace_doc_free(doc);
			return CLI_FAIL;
		}
	}
	int ret = cgtrace_doc_export_jsonl(doc, fd);
	if (ret < 0)
		fprintf(stderr, "%s: %s\n", output ? output : "<stdout>", strerror(-ret));
	if (output && close(fd) < 0 && ret == 0) {
		fprintf(stderr, "%s: %s\n", output, strerror(errno));
		ret = -1;
	}
	cgtrace_doc_free(doc);
	return ret < 0 ? CLI_FAIL : CLI_OK;
}

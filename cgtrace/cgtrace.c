/* SPDX-License-Identifier: MIT */
/* cgtrace: the dispatcher. Each subcommand lives in its own cmd-*.c file. */
#include <stdio.h>
#include <string.h>

#include <locale.h>
#include <malloc.h>

#include "cli.h"

static int help_run(int argc, char **argv);

static const struct cli_cmd cli_help = {
	.name = "help",
	.args = "[COMMAND]",
	.help = "Describes COMMAND (as 'cgtrace COMMAND --help' does), or without one lists\n"
		"the commands. 'cgtrace --version' prints the version.\n",
	.run = help_run,
};

static const struct cli_cmd *const commands[] = {
	&cli_summary, &cli_memory, &cli_steps, &cli_top,   &cli_leaks, &cli_timeline, &cli_validate,
	&cli_export,  &cli_plot,   &cli_report, &cli_diff, &cli_check, &cli_help,
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: cgtrace COMMAND [OPTIONS] TRACE\n\n"
		   "Reads a candle-graph/trace/6 trace written by cgprobe and answers what was\n"
		   "the peak, where, when and made of what. TRACE is in the compact encoding\n"
		   "(.cgt, what the probe writes by default), JSONL text (.jsonl) or\n"
		   "zstd-compressed JSONL (.zst), told apart by content, whatever its name;\n"
		   "- reads standard input.\n\n"
		   "Several traces, or a folder of them (cgprobe -o DIR/), are one job of many\n"
		   "processes (docs/jobs.md), which summary, memory, top, leaks, timeline, plot,\n"
		   "report, export --format perfetto and check answer as one: TRACE... | DIR;\n"
		   "each side of diff is a trace or a folder (docs/compare.md).\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i]->name, commands[i]->args);
	fprintf(f, "\n'cgtrace help COMMAND' or 'cgtrace COMMAND --help' describes one.\n"
		   "Exit status: 0 success, 1 unreadable or invalid trace, 2 usage error;\n"
		   "check: 0 every limit holds, 1 a limit broken, 2 usage error, 3 unreadable trace.\n");
}

static const struct cli_cmd *find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

/* help [COMMAND]: the command it names may be help itself. */
static int help_run(int argc, char **argv)
{
	if (argc > 2)
		return cli_usage_error(&cli_help, "expected one COMMAND, got %d", argc - 1);
	if (argc < 2) {
		usage(stdout);
		return CLI_OK;
	}
	const struct cli_cmd *cmd = strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0
					    ? &cli_help
					    : find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "cgtrace: unknown command '%s'\n", argv[1]);
		return CLI_USAGE;
	}
	cli_print_help(cmd, stdout);
	return CLI_OK;
}

int main(int argc, char **argv)
{
	/* Only the character set: whether the terminal takes block elements (summary). */
	setlocale(LC_CTYPE, "");
	/*
	 * glibc raises its mmap threshold past each large block freed, so the
	 * second trace a command reads (a job's) gets its large buffers from
	 * the heap, where growing them leaves holes: a job of two GPU traces
	 * held 43 MiB where one read holds 26. A fixed threshold keeps each
	 * read's large buffers in their own mappings, given back when freed.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
		usage(stdout);
		return CLI_OK;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
		printf("cgtrace %s (%s)\n", CGTRACE_VERSION, CGTRACE_SCHEMA);
		return CLI_OK;
	}
	const struct cli_cmd *cmd = find(name);
	if (!cmd) {
		fprintf(stderr, "cgtrace: unknown command '%s'\n", name);
		usage(stderr);
		return CLI_USAGE;
	}
	return cmd->run(argc - 1, argv + 1);
}

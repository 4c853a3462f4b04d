/* SPDX-License-Identifier: MIT */
/* cgtrace: the dispatcher. Each subcommand lives in its own cmd-*.c file. */
#include <stdio.h>
#include <string.h>

#include <locale.h>

#include "cli.h"

static const struct cli_cmd *const commands[] = {
	&cli_summary, &cli_memory, &cli_top, &cli_leaks, &cli_timeline, &cli_validate, &cli_export,
	&cli_plot,
	&cli_report,
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: cgtrace COMMAND [OPTIONS] TRACE\n\n"
		   "Reads a candle-graph/trace/6 trace (plain or .zst; - for stdin) written by\n"
		   "cgprobe and answers what was the peak, where, when and made of what.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i]->name, commands[i]->args);
	fprintf(f, "\n'cgtrace help COMMAND' or 'cgtrace COMMAND --help' describes one.\n"
		   "Exit status: 0 success, 1 unreadable or invalid trace, 2 usage error.\n");
}

static const struct cli_cmd *find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	/* Only the character set: whether the terminal takes block elements (summary). */
	setlocale(LC_CTYPE, "");
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
	if (strcmp(name, "help") == 0) {
		const struct cli_cmd *cmd = argc > 2 ? find(argv[2]) : NULL;
		if (argc > 2 && !cmd) {
			fprintf(stderr, "cgtrace: unknown command '%s'\n", argv[2]);
			return CLI_USAGE;
		}
		if (cmd)
			cli_print_help(cmd, stdout);
		else
			usage(stdout);
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

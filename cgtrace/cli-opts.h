/* SPDX-License-Identifier: MIT */
/*
 * A command's options, described once in a table: cli_parse reads argv
 * against it, and the help prints its option rows from it.
 */
#ifndef CGTRACE_CLI_OPTS_H
#define CGTRACE_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

enum cli_opt_kind {
	CLI_OPT_FLAG,   /* bool, set when given */
	CLI_OPT_STR,    /* const char *, the argument as given (checked by the command) */
	CLI_OPT_COUNT,  /* size_t: plain decimal digits, in [min, max] when max is set */
	CLI_OPT_CHOICE, /* int (or an enum of its size): the index of one of choices */
	CLI_OPT_SIZE,   /* uint64_t: a size with its unit, "64MiB" (cli-size.h) */
	CLI_OPT_LIST,   /* struct cli_list: each time the option is given, its argument */
};

/* The most arguments one CLI_OPT_LIST option takes. */
#define CLI_LIST_MAX 64

/* The arguments of an option given many times (--max-peak cpu=1GiB --max-peak ...), in order. */
struct cli_list {
	const char *v[CLI_LIST_MAX];
	size_t n;
};

/* One value of an option, with its own help row ("--by peak  bytes each site ..."). */
struct cli_choice {
	const char *name;
	const char *help;
};

/*
 * One option. The value goes to the command's argument struct at offset;
 * help is the text of its row in --help, lines apart by '\n', after a label
 * made of its spellings and arg ("-o, --output FILE") unless label says
 * otherwise. With choices, the help has one row per choice instead
 * ("--format jsonl"), and a CLI_OPT_CHOICE takes only their names.
 */
struct cli_opt {
	const char *name; /* the long name, or NULL */
	char short_name;  /* or 0 */
	enum cli_opt_kind kind;
	size_t offset;
	const char *arg; /* the argument's name in the label: "N", "FILE" */
	const char *help;
	const char *label;                /* the label when it is not the generated one */
	size_t min, max;                  /* CLI_OPT_COUNT */
	const struct cli_choice *choices; /* ends with a NULL name */
	size_t seen; /* CLI_SEEN of a bool set when the option is given, or 0 */
};

/* A bool member of the argument struct that cli_parse sets when an option is given. */
#define CLI_SEEN(type, member) (offsetof(type, member) + 1)

struct cli_cmd {
	const char *name;
	const char *args;
	const char *help;           /* what the command does, before the option rows */
	const struct cli_opt *opts; /* ends with an entry without name and short_name */
	int label_width;            /* the option rows' label column */
	const char *help_tail;      /* what follows the option rows, or NULL */
	int (*run)(int argc, char **argv);
};

/*
 * Reads the options of argv (argv[0] the command's name) into args, as
 * getopt_long reads them: --name=VALUE or --name VALUE, -cVALUE or -c
 * VALUE, abbreviations of long names, options after operands, "--" ending
 * them; -h and --help print the help. false when the command is done, with
 * the status it exits with: CLI_OK after the help, CLI_USAGE after a usage
 * error printed. The operands start at optind.
 */
bool cli_parse(const struct cli_cmd *cmd, int argc, char **argv, void *args, int *status);

/* cli_parse, then cli_trace_arg: the trace path, or NULL when the command is done (*status). */
const char *cli_parse_trace(const struct cli_cmd *cmd, int argc, char **argv, void *args,
			    int *status);
/* A count option's value: plain decimal digits only (as "-n 5", "--top 0"); false otherwise. */
bool cli_count_arg(const char *s, size_t *out);
/* Prints "cgtrace NAME: message" and the usage line on stderr; returns CLI_USAGE. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_print_help(const struct cli_cmd *cmd, FILE *f);
/* Exactly one operand after the options: the trace path. */
const char *cli_trace_arg(const struct cli_cmd *cmd, int argc, char **argv, int *status);
/*
 * After cli_parse: the arguments name a job (docs/jobs.md), more than one
 * trace or a folder, which the commands that take one read as such.
 */
bool cli_job_args(int argc, char **argv);
/* The index of name in choices, or -1. */
int cli_choice_find(const struct cli_choice *choices, const char *name);

#endif

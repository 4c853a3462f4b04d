/* SPDX-License-Identifier: MIT */
/*
 * The commands' option tables, read through getopt_long: its spellings,
 * abbreviations, argument order and messages ("memory: unrecognized option
 * '--frob'") are what users and the golden tests know, so the table only
 * builds what getopt_long takes and stores what it returns.
 */
#include "cli-opts.h"
#include "cli-size.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* More than any command has; a longer table is refused as a usage error. */
#define MAX_OPTS 32
/* getopt_long's value for the long option at table index i: above every char. */
#define LONG_VAL(i) (256 + (int)(i))

static bool is_end(const struct cli_opt *o)
{
	return !o->name && !o->short_name;
}

static bool takes_arg(const struct cli_opt *o)
{
	return o->kind != CLI_OPT_FLAG;
}

bool cli_job_args(int argc, char **argv)
{
	struct stat st;
	int left = argc - optind;
	return left > 1 || (left == 1 && strcmp(argv[optind], "-") != 0 &&
			    stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode));
}

const char *cli_trace_arg(const struct cli_cmd *cmd, int argc, char **argv, int *status)
{
	int left = argc - optind;
	if (left != 1) {
		*status = cli_usage_error(cmd, left ? "expected one TRACE argument, got %d"
						    : "missing TRACE argument",
					  left);
		return NULL;
	}
	return argv[optind];
}

bool cli_count_arg(const char *s, size_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end)
		return false;
	*out = v;
	return true;
}

int cli_choice_find(const struct cli_choice *choices, const char *name)
{
	for (int i = 0; choices && choices[i].name; i++)
		if (strcmp(choices[i].name, name) == 0)
			return i;
	return -1;
}

/* ---- help ---- */

/* "-o, --output FILE", "--top N", "-n N", "--json"; "--format jsonl" for a choice. */
static void label_of(char *buf, size_t len, const struct cli_opt *o, const char *choice)
{
	if (o->label) {
		snprintf(buf, len, "%s", o->label);
		return;
	}
	const char *arg = choice ? choice : takes_arg(o) ? o->arg : NULL;
	char s[8] = "", l[64] = "";
	if (o->short_name)
		snprintf(s, sizeof(s), "-%c%s", o->short_name, o->name ? ", " : "");
	if (o->name)
		snprintf(l, sizeof(l), "--%s", o->name);
	snprintf(buf, len, "%s%s%s%s", s, l, arg ? " " : "", arg ? arg : "");
}

/*
 * "  LABEL   text", the text's further lines under its first; a label as
 * wide as the column has the text start on the next line.
 */
static void print_row(FILE *f, int width, const char *label, const char *text)
{
	if ((int)strlen(label) >= width)
		fprintf(f, "  %s\n%*s", label, width + 2, "");
	else
		fprintf(f, "  %-*s", width, label);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		fprintf(f, "%.*s\n", (int)n, p);
		p += n + (nl != NULL);
		/* A blank line stays blank: no indent before its newline. */
		if (*p && *p != '\n')
			fprintf(f, "%*s", width + 2, "");
	}
}

static void print_rows(const struct cli_cmd *cmd, FILE *f)
{
	char label[96];
	for (const struct cli_opt *o = cmd->opts; o && !is_end(o); o++) {
		if (!o->choices) {
			label_of(label, sizeof(label), o, NULL);
			print_row(f, cmd->label_width, label, o->help);
			continue;
		}
		for (const struct cli_choice *c = o->choices; c->name; c++) {
			label_of(label, sizeof(label), o, c->name);
			print_row(f, cmd->label_width, label, c->help);
		}
	}
}

void cli_print_help(const struct cli_cmd *cmd, FILE *f)
{
	fprintf(f, "Usage: cgtrace %s %s\n\n%s", cmd->name, cmd->args, cmd->help);
	print_rows(cmd, f);
	if (cmd->help_tail)
		fputs(cmd->help_tail, f);
}

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "cgtrace %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nUsage: cgtrace %s %s\n", cmd->name, cmd->args);
	return CLI_USAGE;
}

/* ---- parsing ---- */

/* "--top" or "-n": how the messages name an option. */
static const char *spelling(char buf[64], const struct cli_opt *o)
{
	if (o->name)
		snprintf(buf, 64, "--%s", o->name);
	else
		snprintf(buf, 64, "-%c", o->short_name);
	return buf;
}

static bool bad_choice(const struct cli_cmd *cmd, const struct cli_opt *o, const char *arg,
		       int *status)
{
	char names[256] = "", name[64];
	size_t at = 0;
	for (const struct cli_choice *c = o->choices; c->name && at < sizeof(names); c++)
		at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s",
				       c == o->choices ? "" : "|", c->name);
	*status = cli_usage_error(cmd, "%s: '%s' is not one of %s", spelling(name, o), arg, names);
	return false;
}

/* Stores the option's value; false with the usage error printed. */
static bool store(const struct cli_cmd *cmd, const struct cli_opt *o, const char *arg,
		  void *args, int *status)
{
	char *to = (char *)args + o->offset, name[64];
	size_t count;
	uint64_t size;
	struct cli_list *list;
	int choice;
	switch (o->kind) {
	case CLI_OPT_FLAG:
		*(bool *)to = true;
		break;
	case CLI_OPT_STR:
		*(const char **)to = arg;
		break;
	case CLI_OPT_COUNT:
		if (!cli_count_arg(arg, &count) || (o->max && (count < o->min || count > o->max))) {
			*status = o->max ? cli_usage_error(cmd, "%s needs a number from %zu to %zu",
							   spelling(name, o), o->min, o->max)
					 : cli_usage_error(cmd, "%s needs a number, got '%s'",
							   spelling(name, o), arg);
			return false;
		}
		*(size_t *)to = count;
		break;
	case CLI_OPT_CHOICE:
		choice = cli_choice_find(o->choices, arg);
		if (choice < 0)
			return bad_choice(cmd, o, arg, status);
		*(int *)to = choice;
		break;
	case CLI_OPT_SIZE:
		if (!cli_size_parse(arg, &size)) {
			*status = cli_usage_error(cmd, "%s: '%s' is not a size (a number and one of %s)",
						  spelling(name, o), arg, CLI_SIZE_UNITS);
			return false;
		}
		*(uint64_t *)to = size;
		break;
	case CLI_OPT_LIST:
		list = (struct cli_list *)(void *)to;
		if (list->n == CLI_LIST_MAX) {
			*status = cli_usage_error(cmd, "%s: more than %d of them", spelling(name, o),
						  CLI_LIST_MAX);
			return false;
		}
		list->v[list->n++] = arg;
		break;
	}
	if (o->seen)
		*((bool *)((char *)args + o->seen - 1)) = true;
	return true;
}

static const struct cli_opt *by_short(const struct cli_opt *opts, int c)
{
	for (const struct cli_opt *o = opts; o && !is_end(o); o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

bool cli_parse(const struct cli_cmd *cmd, int argc, char **argv, void *args, int *status)
{
	/* Room for every option and --help, then the zero entry ending the list. */
	struct option longs[MAX_OPTS + 2];
	char shorts[2 * MAX_OPTS + 2] = "h";
	size_t n = 0, n_long = 0, n_short = 1;
	for (const struct cli_opt *o = cmd->opts; o && !is_end(o); o++, n++) {
		if (n == MAX_OPTS) {
			*status = cli_usage_error(cmd, "internal error: more than %d options", MAX_OPTS);
			return false;
		}
		if (o->name)
			longs[n_long++] = (struct option){o->name, takes_arg(o) ? required_argument
									 : no_argument,
							  NULL, LONG_VAL(n)};
		if (o->short_name) {
			shorts[n_short++] = o->short_name;
			if (takes_arg(o))
				shorts[n_short++] = ':';
		}
	}
	longs[n_long++] = (struct option){"help", no_argument, NULL, 'h'};
	longs[n_long] = (struct option){0};
	shorts[n_short] = '\0';
	/* 0, not 1: getopt starts over (a test parses many argv in one process). */
	optind = 0;
	int c;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == 'h') {
			cli_print_help(cmd, stdout);
			*status = CLI_OK;
			return false;
		}
		const struct cli_opt *o = c >= LONG_VAL(0) ? &cmd->opts[c - LONG_VAL(0)]
							   : by_short(cmd->opts, c);
		/* '?': getopt_long said what was wrong (unknown, or its argument missing). */
		if (!o) {
			*status = cli_usage_error(cmd, "unknown option");
			return false;
		}
		if (!store(cmd, o, optarg, args, status))
			return false;
	}
	*status = CLI_OK;
	return true;
}

const char *cli_parse_trace(const struct cli_cmd *cmd, int argc, char **argv, void *args,
			    int *status)
{
	if (!cli_parse(cmd, argc, argv, args, status))
		return NULL;
	return cli_trace_arg(cmd, argc, argv, status);
}

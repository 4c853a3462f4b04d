/* SPDX-License-Identifier: MIT */
/*
 * cgtrace's option tables and JSON writer (cgtrace/cli-opts.c, json-out.c),
 * from cgtrace/'s sources: argv read against a table the way getopt_long
 * reads it, the usage errors every command prints, the help rows made from
 * the table, and JSON whose commas, nesting and escaping the writer owns.
 * The commands' own outputs are the golden tests'.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <getopt.h>

#include "cli.h"
#include "cli-opts.h"
#include "cli-size.h"
#include "json-out.h"
#include "test-main.h"

/* ---- a command to parse for ---- */

struct args {
	const char *device, *out;
	size_t top, rows;
	int by;
	bool json, exact, top_given;
};

static const struct cli_choice rankings[] = {
	{"peak", "bytes held at the peak"},
	{"total", "bytes allocated in all"},
	{"leaked", "bytes never freed,\nwhatever their age"},
	{NULL, NULL},
};

static int no_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return CLI_OK;
}

static const struct cli_cmd cmd = {
	.name = "probe",
	.args = "[--json] [--top N] TRACE",
	.help = "Looks at a trace.\n\n",
	.label_width = 12,
	.opts = (const struct cli_opt[]){
		{.name = "json", .offset = offsetof(struct args, json), .help = "one JSON object"},
		{.name = "bytes", .offset = offsetof(struct args, exact), .help = "exact bytes"},
		{.name = "top", .kind = CLI_OPT_COUNT, .offset = offsetof(struct args, top),
		 .seen = CLI_SEEN(struct args, top_given), .arg = "N",
		 .help = "rows shown (default 20),\nevery row with 0"},
		{.name = "rows", .kind = CLI_OPT_COUNT, .offset = offsetof(struct args, rows),
		 .arg = "N", .min = 1, .max = 100, .help = "chart rows"},
		{.short_name = 'n', .kind = CLI_OPT_COUNT, .offset = offsetof(struct args, top),
		 .arg = "N", .help = "the same as --top"},
		{.name = "device", .kind = CLI_OPT_STR, .offset = offsetof(struct args, device),
		 .arg = "D", .help = "only device D"},
		{.name = "output", .short_name = 'o', .kind = CLI_OPT_STR,
		 .offset = offsetof(struct args, out), .arg = "FILE", .help = "where it goes"},
		{.name = "by", .kind = CLI_OPT_CHOICE, .offset = offsetof(struct args, by),
		 .choices = rankings},
		{.name = "width-of-the-column", .short_name = 'W', .kind = CLI_OPT_STR,
		 .offset = offsetof(struct args, out), .label = "-W LONG",
		 .help = "a label set by hand"},
		{.name = "overflowing-label", .offset = offsetof(struct args, exact),
		 .help = "starts on the next line"},
		{0},
	},
	.help_tail = "\nThat is all.\n",
	.run = no_run,
};

/* What a run of cli_parse returned, printed and left in args. */
struct parsed {
	bool go_on;
	int status;
	int operands; /* optind */
	struct args a;
	char out[4096], err[4096];
};

/* Reads what fd 1 or 2 got in a temporary file since start into buf. */
static void read_back(FILE *f, char *buf, size_t len)
{
	ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Runs fn(arg) with standard output and standard error caught in out and err. */
static void caught(void (*fn)(void *arg), void *arg, char *out, char *err, size_t len)
{
	FILE *fo = tmpfile(), *fe = tmpfile();
	ck_assert_ptr_nonnull(fo);
	ck_assert_ptr_nonnull(fe);
	fflush(stdout);
	fflush(stderr);
	int so = dup(STDOUT_FILENO), se = dup(STDERR_FILENO);
	ck_assert_int_ge(so, 0);
	ck_assert_int_ge(se, 0);
	dup2(fileno(fo), STDOUT_FILENO);
	dup2(fileno(fe), STDERR_FILENO);
	fn(arg);
	fflush(stdout);
	fflush(stderr);
	dup2(so, STDOUT_FILENO);
	dup2(se, STDERR_FILENO);
	close(so);
	close(se);
	read_back(fo, out, len);
	read_back(fe, err, len);
}

struct parse_call {
	char **argv;
	int argc;
	struct parsed *p;
};

static void do_parse(void *arg)
{
	struct parse_call *c = arg;
	c->p->go_on = cli_parse(&cmd, c->argc, c->argv, &c->p->a, &c->p->status);
	c->p->operands = optind;
}

/* Parses the words of line (argv[0] "probe") into p; argv stays for the operands. */
static char **parse(const char *line, struct parsed *p)
{
	static char copy[512];
	static char *argv[32];
	int argc = 0;
	snprintf(copy, sizeof(copy), "probe %s", line);
	for (char *w = strtok(copy, " "); w && argc < 31; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	memset(p, 0, sizeof(*p));
	p->a.top = 20;
	p->status = -1;
	struct parse_call c = {argv, argc, p};
	caught(do_parse, &c, p->out, p->err, sizeof(p->out));
	return argv;
}

/* ---- parsing ---- */

/* What a parse left, as one line: the values, then the operands after '|'. */
static const char *described(const struct parsed *p, char **argv)
{
	static char buf[512];
	const struct args *a = &p->a;
	int n = snprintf(buf, sizeof(buf), "%s%stop=%zu%s rows=%zu by=%d device=%s out=%s |",
			 a->json ? "json " : "", a->exact ? "bytes " : "", a->top,
			 a->top_given ? " seen" : "", a->rows, a->by,
			 a->device ? a->device : "-", a->out ? a->out : "-");
	for (int i = p->operands; argv[i] && n < (int)sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, " %s", argv[i]);
	return buf;
}

/* Accepted: what each spelling stores, and the operands left where getopt_long leaves them. */
START_TEST(opts_accepted)
{
	static const struct {
		const char *line, *got;
	} cases[] = {
		/* Nothing given: the defaults stay, the seen flag is clear. */
		{"TRACE", "top=20 rows=0 by=0 device=- out=- | TRACE"},
		{"--json --top 5 --device cuda:0 -o out.svg --by leaked TRACE",
		 "json top=5 seen rows=0 by=2 device=cuda:0 out=out.svg | TRACE"},
		/* --opt=value, -cvalue; an empty value after '=' is a value. */
		{"--top=7 --device=cpu --output=x TRACE", "top=7 seen rows=0 by=0 device=cpu out=x | TRACE"},
		{"-n9 -oy --device= TRACE", "top=9 rows=0 by=0 device= out=y | TRACE"},
		/* -n stores where --top does, the last one wins, and only --top is seen. */
		{"--top 3 -n 4 TRACE", "top=4 seen rows=0 by=0 device=- out=- | TRACE"},
		{"-n 3 TRACE", "top=3 rows=0 by=0 device=- out=- | TRACE"},
		/* Unambiguous abbreviations of long names. */
		{"--js --dev cpu TRACE", "json top=20 rows=0 by=0 device=cpu out=- | TRACE"},
		/* Bounds are inclusive; a choice by its full name. */
		{"--rows 1 --by=total TRACE", "top=20 rows=1 by=1 device=- out=- | TRACE"},
		{"--rows=100 TRACE", "top=20 rows=100 by=0 device=- out=- | TRACE"},
		/* Options after operands; "--" ends the options, -h included. */
		{"TRACE --json", "json top=20 rows=0 by=0 device=- out=- | TRACE"},
		{"--bytes -- --json -h", "bytes top=20 rows=0 by=0 device=- out=- | --json -h"},
		{"a --json b", "json top=20 rows=0 by=0 device=- out=- | a b"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct parsed p;
		char **argv = parse(cases[i].line, &p);
		ck_assert_msg(p.go_on && p.status == CLI_OK, "'%s': %s", cases[i].line, p.err);
		ck_assert_str_eq(described(&p, argv), cases[i].got);
		ck_assert_str_eq(p.out, "");
		ck_assert_str_eq(p.err, "");
	}
	ck_assert_int_eq(cli_choice_find(rankings, "leaked"), 2);
	ck_assert_int_eq(cli_choice_find(rankings, "Peak"), -1);
	ck_assert_int_eq(cli_choice_find(NULL, "peak"), -1);
}
END_TEST

#define USAGE "Usage: cgtrace probe [--json] [--top N] TRACE\n"
#define UNKNOWN "cgtrace probe: unknown option\n" USAGE

/* Each refused: status 2, getopt_long's line where it has one, then the command's two. */
START_TEST(opts_usage_errors)
{
	static const struct {
		const char *line, *err;
	} cases[] = {
		{"--frob TRACE", "probe: unrecognized option '--frob'\n" UNKNOWN},
		{"-x TRACE", "probe: invalid option -- 'x'\n" UNKNOWN},
		/* A flag given a value; a value missing at the end. */
		{"--json=1 TRACE", "probe: option '--json' doesn't allow an argument\n" UNKNOWN},
		{"TRACE --top", "probe: option '--top' requires an argument\n" UNKNOWN},
		{"TRACE -n", "probe: option requires an argument -- 'n'\n" UNKNOWN},
		/* Counts: plain digits only, named as the option is spelt. */
		{"--top x TRACE", "cgtrace probe: --top needs a number, got 'x'\n" USAGE},
		{"--top=-1 TRACE", "cgtrace probe: --top needs a number, got '-1'\n" USAGE},
		{"--top=+1 TRACE", "cgtrace probe: --top needs a number, got '+1'\n" USAGE},
		{"--top=0x10 TRACE", "cgtrace probe: --top needs a number, got '0x10'\n" USAGE},
		{"--top=5x TRACE", "cgtrace probe: --top needs a number, got '5x'\n" USAGE},
		{"--top= TRACE", "cgtrace probe: --top needs a number, got ''\n" USAGE},
		{"-n q TRACE", "cgtrace probe: -n needs a number, got 'q'\n" USAGE},
		/* A bounded count says its bounds. */
		{"--rows 0 TRACE", "cgtrace probe: --rows needs a number from 1 to 100\n" USAGE},
		{"--rows=101 TRACE", "cgtrace probe: --rows needs a number from 1 to 100\n" USAGE},
		/* A choice lists the names; a prefix of one is not it. */
		{"--by size TRACE", "cgtrace probe: --by: 'size' is not one of peak|total|leaked\n" USAGE},
		{"--by tot TRACE", "cgtrace probe: --by: 'tot' is not one of peak|total|leaked\n" USAGE},
		/* --b is --bytes or --by: getopt_long says which. */
		{"--b TRACE", "probe: option '--b' is ambiguous; possibilities: '--bytes' '--by'\n" UNKNOWN},
		/* The first error in argv order is the one told. */
		{"--top x --frob TRACE", "cgtrace probe: --top needs a number, got 'x'\n" USAGE},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct parsed p;
		parse(cases[i].line, &p);
		ck_assert_msg(!p.go_on && p.status == CLI_USAGE, "'%s' taken", cases[i].line);
		ck_assert_str_eq(p.err, cases[i].err);
		ck_assert_str_eq(p.out, "");
	}
}
END_TEST

/* A size option (a number and a unit) and a list option (each time given, kept in order). */
struct size_args {
	uint64_t limit;
	struct cli_list peaks;
};

static const struct cli_cmd size_cmd = {
	.name = "sized",
	.args = "[--limit SIZE] [--peak D=SIZE]... TRACE",
	.help = "Sizes.\n\n",
	.label_width = 12,
	.opts = (const struct cli_opt[]){
		{.name = "limit", .kind = CLI_OPT_SIZE, .offset = offsetof(struct size_args, limit),
		 .arg = "SIZE", .help = "a size"},
		{.name = "peak", .kind = CLI_OPT_LIST, .offset = offsetof(struct size_args, peaks),
		 .arg = "D=SIZE", .help = "many"},
		{0},
	},
	.run = no_run,
};

struct size_call {
	char **argv;
	int argc;
	struct size_args *a;
	bool go_on;
	int status;
};

static void do_size_parse(void *arg)
{
	struct size_call *c = arg;
	c->go_on = cli_parse(&size_cmd, c->argc, c->argv, c->a, &c->status);
}

START_TEST(opts_sizes_lists)
{
	char out[1024], err[1024];
	char *ok_argv[] = {"sized", "--limit", "1.5GiB", "--peak", "cpu=1MB", "T",
			   "--peak=cuda:*=2KiB", NULL};
	struct size_args a = {0};
	struct size_call c = {ok_argv, 7, &a, false, -1};
	caught(do_size_parse, &c, out, err, sizeof(out));
	ck_assert_msg(c.go_on && c.status == CLI_OK, "%s", err);
	ck_assert_uint_eq(a.limit, 3ull << 29);
	ck_assert_uint_eq(a.peaks.n, 2);
	ck_assert_str_eq(a.peaks.v[0], "cpu=1MB");
	ck_assert_str_eq(a.peaks.v[1], "cuda:*=2KiB");
	char *bad_argv[] = {"sized", "--limit", "12XB", "T", NULL};
	a = (struct size_args){0};
	c = (struct size_call){bad_argv, 4, &a, true, -1};
	caught(do_size_parse, &c, out, err, sizeof(out));
	ck_assert(!c.go_on && c.status == CLI_USAGE);
	ck_assert_str_eq(err, "cgtrace sized: --limit: '12XB' is not a size (a number and one of "
			      CLI_SIZE_UNITS ")\nUsage: cgtrace sized [--limit SIZE] [--peak D=SIZE]... TRACE\n");
	/* A list holds CLI_LIST_MAX, and says so past it. */
	char *many[2 * CLI_LIST_MAX + 6];
	int n = 0;
	many[n++] = "sized";
	for (int i = 0; i <= CLI_LIST_MAX; i++) {
		many[n++] = "--peak";
		many[n++] = "cpu=1";
	}
	many[n++] = "T";
	many[n] = NULL;
	a = (struct size_args){0};
	c = (struct size_call){many, n, &a, true, -1};
	caught(do_size_parse, &c, out, err, sizeof(out));
	ck_assert(!c.go_on && c.status == CLI_USAGE);
	ck_assert_uint_eq(a.peaks.n, CLI_LIST_MAX);
	ck_assert_ptr_nonnull(strstr(err, "--peak: more than 64 of them"));
}
END_TEST

/* In argv order: a usage error before -h is the error, -h before it is the help. */
START_TEST(opts_help)
{
	static const char help[] =
		"Usage: cgtrace probe [--json] [--top N] TRACE\n"
		"\n"
		"Looks at a trace.\n"
		"\n"
		"  --json      one JSON object\n"
		"  --bytes     exact bytes\n"
		"  --top N     rows shown (default 20),\n"
		"              every row with 0\n"
		"  --rows N    chart rows\n"
		"  -n N        the same as --top\n"
		"  --device D  only device D\n"
		"  -o, --output FILE\n"
		"              where it goes\n"
		"  --by peak   bytes held at the peak\n"
		"  --by total  bytes allocated in all\n"
		/* One short of the column: one space before its text. */
		"  --by leaked bytes never freed,\n"
		"              whatever their age\n"
		"  -W LONG     a label set by hand\n"
		"  --overflowing-label\n"
		"              starts on the next line\n"
		"\n"
		"That is all.\n";
	struct parsed p;
	parse("--json -h --frob TRACE", &p);
	ck_assert(!p.go_on);
	ck_assert_int_eq(p.status, CLI_OK);
	ck_assert_str_eq(p.out, help);
	ck_assert_str_eq(p.err, "");
	parse("--help", &p);
	ck_assert_int_eq(p.status, CLI_OK);
	ck_assert_str_eq(p.out, help);
	parse("--frob -h TRACE", &p);
	ck_assert_int_eq(p.status, CLI_USAGE);
	ck_assert_str_eq(p.out, "");
}
END_TEST

struct trace_call {
	const char *line;
	const char *got;
	int status;
};

static void do_trace_arg(void *arg)
{
	struct trace_call *c = arg;
	struct parsed p;
	char **argv = parse(c->line, &p);
	int argc = 0;
	while (argv[argc])
		argc++;
	c->status = CLI_OK;
	c->got = p.go_on ? cli_trace_arg(&cmd, argc, argv, &c->status) : NULL;
}

START_TEST(opts_trace_operand)
{
	static const struct {
		const char *line, *path, *err;
	} cases[] = {
		{"--json TRACE", "TRACE", ""},
		{"--json", NULL, "cgtrace probe: missing TRACE argument\n" USAGE},
		{"a --json b", NULL, "cgtrace probe: expected one TRACE argument, got 2\n" USAGE},
		{"-- -", "-", ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trace_call c = {.line = cases[i].line};
		char out[256], err[512];
		caught(do_trace_arg, &c, out, err, sizeof(err) < sizeof(out) ? sizeof(err) : sizeof(out));
		ck_assert_str_eq(err, cases[i].err);
		if (cases[i].path) {
			ck_assert_str_eq(c.got, cases[i].path);
			ck_assert_int_eq(c.status, CLI_OK);
		} else {
			ck_assert_ptr_null(c.got);
			ck_assert_int_eq(c.status, CLI_USAGE);
		}
	}
}
END_TEST

/* ---- JSON ---- */

/* The writer's text so far, NUL-terminated in b. */
static const char *text(struct cli_buf *b)
{
	cli_buf_putc(b, '\0');
	b->len--;
	return b->p;
}

START_TEST(json_nested_commas)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key(&w, "a");
	cli_jw_begin_array(&w);
	cli_jw_u64(&w, 1);
	cli_jw_begin_array(&w);
	cli_jw_u64(&w, 2);
	cli_jw_u64(&w, 3);
	cli_jw_end_array(&w);
	cli_jw_begin_array(&w);
	cli_jw_end_array(&w);
	cli_jw_begin_object(&w);
	cli_jw_end_object(&w);
	cli_jw_end_array(&w);
	cli_jw_key(&w, "b");
	cli_jw_begin_object(&w);
	cli_jw_key(&w, "c");
	cli_jw_begin_array(&w);
	cli_jw_begin_object(&w);
	cli_jw_key_u64(&w, "d", 4);
	cli_jw_key_str(&w, "e", NULL);
	cli_jw_end_object(&w);
	cli_jw_begin_object(&w);
	cli_jw_key_bool(&w, "f", false);
	cli_jw_end_object(&w);
	cli_jw_end_array(&w);
	cli_jw_end_object(&w);
	cli_jw_key(&w, "g");
	cli_jw_null(&w);
	cli_jw_end_object(&w);
	ck_assert_int_eq(cli_jw_finish(&w), 0);
	ck_assert_str_eq(text(&b),
			 "{\"a\":[1,[2,3],[],{}],\"b\":{\"c\":[{\"d\":4,\"e\":null},{\"f\":false}]},"
			 "\"g\":null}");
	cli_buf_fini(&b);
}
END_TEST

/*
 * Writes a script of writer calls, one character each: { } [ ] begin and
 * end, k a key "k", 1 the number 1, s the string "x", n null, t true.
 */
static int script(struct cli_buf *b, const char *ops)
{
	struct cli_jw w;
	b->len = 0;
	cli_jw_init(&w, b);
	for (const char *c = ops; *c; c++) {
		switch (*c) {
		case '{': cli_jw_begin_object(&w); break;
		case '}': cli_jw_end_object(&w); break;
		case '[': cli_jw_begin_array(&w); break;
		case ']': cli_jw_end_array(&w); break;
		case 'k': cli_jw_key(&w, "k"); break;
		case '1': cli_jw_u64(&w, 1); break;
		case 's': cli_jw_str(&w, "x"); break;
		case 'n': cli_jw_null(&w); break;
		case 't': cli_jw_bool(&w, true); break;
		default: ck_abort_msg("no op '%c'", *c);
		}
	}
	return cli_jw_finish(&w);
}

/*
 * Commas between elements and members only, at every depth; a bare value
 * is a whole document. Each misuse fails the writer for good: nothing is
 * written from it on, whatever follows.
 */
START_TEST(json_scripts)
{
	static const struct {
		const char *ops;
		int ret;
		const char *text;
	} cases[] = {
		{"s", 0, "\"x\""},
		{"[[][1][11]]", 0, "[[],[1],[1,1]]"},
		{"[{}{}[[]]n]", 0, "[{},{},[[]],null]"},
		{"{k{k{k[1t]}}k1}", 0, "{\"k\":{\"k\":{\"k\":[1,true]}},\"k\":1}"},
		/* A value without its key, a key in an array, a key without its value. */
		{"{1k1}", -EINVAL, "{"},
		{"[1k1]", -EINVAL, "[1"},
		{"{k}", -EINVAL, "{\"k\":"},
		{"{kk1}", -EINVAL, "{\"k\":"},
		/* Ends that do not match, or close nothing. */
		{"[}]", -EINVAL, "["},
		{"{]}", -EINVAL, "{"},
		{"]", -EINVAL, ""},
		/* Two documents, one left open, none at all. */
		{"11", -EINVAL, "1"},
		{"[]{}", -EINVAL, "[]"},
		{"{k[", -EINVAL, "{\"k\":["},
		{"", -EINVAL, ""},
	};
	struct cli_buf b = {0};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(script(&b, cases[i].ops) == cases[i].ret, "'%s'", cases[i].ops);
		ck_assert_str_eq(text(&b), cases[i].text);
	}
	cli_buf_fini(&b);
}
END_TEST

static const char *one_string(struct cli_buf *b, const char *s)
{
	struct cli_jw w;
	b->len = 0;
	cli_jw_init(&w, b);
	cli_jw_str(&w, s);
	ck_assert_int_eq(cli_jw_finish(&w), 0);
	return text(b);
}

START_TEST(json_string_escaping)
{
	struct cli_buf b = {0};
	ck_assert_str_eq(one_string(&b, "plain"), "\"plain\"");
	ck_assert_str_eq(one_string(&b, "a\"b\\c"), "\"a\\\"b\\\\c\"");
	ck_assert_str_eq(one_string(&b, "\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
	/* Other control characters as \u00XX; '/' and DEL need nothing. */
	ck_assert_str_eq(one_string(&b, "\x01\x1f/\x7f"), "\"\\u0001\\u001f/\x7f\"");
	/* Well-formed UTF-8 as it is; an ill-formed byte becomes U+FFFD. */
	ck_assert_str_eq(one_string(&b, "caf\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x92\xbe"),
			 "\"caf\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x92\xbe\"");
	ck_assert_str_eq(one_string(&b, "a\xff" "b\xc3"), "\"a\xef\xbf\xbd" "b\xef\xbf\xbd\"");
	/* Longer than the writer's stack buffer: escaped just the same. */
	char long_s[1000];
	memset(long_s, '\x02', sizeof(long_s) - 1);
	long_s[sizeof(long_s) - 1] = '\0';
	const char *got = one_string(&b, long_s);
	ck_assert_uint_eq(strlen(got), 2 + 6 * (sizeof(long_s) - 1));
	ck_assert_int_eq(strncmp(got, "\"\\u0002\\u0002", 13), 0);
	/* Keys are escaped as strings are. */
	struct cli_jw w;
	b.len = 0;
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key_u64(&w, "k\"\n", 1);
	cli_jw_end_object(&w);
	ck_assert_str_eq(text(&b), "{\"k\\\"\\n\":1}");
	cli_buf_fini(&b);
}
END_TEST

START_TEST(json_numbers)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	cli_jw_init(&w, &b);
	cli_jw_begin_array(&w);
	cli_jw_u64(&w, 0);
	cli_jw_u64(&w, UINT64_MAX);
	cli_jw_i64(&w, INT64_MIN);
	cli_jw_i64(&w, -1);
	cli_jw_double(&w, 0.1);
	cli_jw_double(&w, 1.0 / 3);
	cli_jw_double(&w, -2.5e300);
	cli_jw_double(&w, 3.0);
	cli_jw_double(&w, NAN);
	cli_jw_double(&w, INFINITY);
	cli_jw_bool(&w, true);
	cli_jw_end_array(&w);
	ck_assert_int_eq(cli_jw_finish(&w), 0);
	ck_assert_str_eq(text(&b), "[0,18446744073709551615,-9223372036854775808,-1,0.1,"
				   "0.33333333333333331,-2.5e+300,3,null,null,true]");
	/* Whatever the digits, a double reads back as itself. */
	double v = 0.1;
	for (int i = 0; i < 200; i++, v = v * 1.37 + 1e-7) {
		b.len = 0;
		cli_jw_init(&w, &b);
		cli_jw_double(&w, v);
		ck_assert(strtod(text(&b), NULL) == v);
	}
	cli_buf_fini(&b);
}
END_TEST

/* As deep as the writer tracks and no deeper; memory running out is the caller's buffer's. */
START_TEST(json_limits)
{
	char ops[2 * CLI_JW_MAX_DEPTH + 1];
	struct cli_buf b = {0};
	memset(ops, '[', CLI_JW_MAX_DEPTH);
	memset(ops + CLI_JW_MAX_DEPTH, ']', CLI_JW_MAX_DEPTH);
	ops[2 * CLI_JW_MAX_DEPTH] = '\0';
	ck_assert_int_eq(script(&b, ops), 0);
	ck_assert_uint_eq(b.len, 2 * CLI_JW_MAX_DEPTH);
	/* One more level is refused, not written past the nesting it tracks. */
	memset(ops, '[', CLI_JW_MAX_DEPTH + 1);
	ops[CLI_JW_MAX_DEPTH + 1] = '\0';
	ck_assert_int_eq(script(&b, ops), -EINVAL);
	ck_assert_uint_eq(b.len, CLI_JW_MAX_DEPTH);
	b.err = true;
	ck_assert_int_eq(script(&b, "{k1}"), -ENOMEM);
	cli_buf_fini(&b);
}
END_TEST

/*
 * The pieces the pictures' writers need: Perfetto's microseconds with
 * three places, one event a line, a number kept as text, columns of a
 * struct array; and a buffer emptied between calls, as a stream does.
 */
START_TEST(json_picture_pieces)
{
	/* Microseconds from nanoseconds: always three places. */
	static const uint64_t ns[] = {0, 1, 12034, UINT64_MAX};
	static const char *const us[] = {"0.000", "0.001", "12.034", "18446744073709551.615"};
	struct cli_buf b = {0};
	struct cli_jw w;
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		b.len = 0;
		cli_jw_init(&w, &b);
		cli_jw_thousandths(&w, ns[i]);
		ck_assert_int_eq(cli_jw_finish(&w), 0);
		ck_assert_str_eq(text(&b), us[i]);
	}
	static const uint64_t v[] = {7, 8, 9};
	struct pair {
		uint64_t a, b;
	} pairs[] = {{1, 2}, {3, 4}};
	b.len = 0;
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key(&w, "raw");
	cli_jw_raw(&w, "0.2");
	cli_jw_key(&w, "v");
	cli_jw_u64s(&w, v, 3);
	cli_jw_key(&w, "none");
	cli_jw_u64s(&w, NULL, 0);
	cli_jw_key(&w, "b");
	cli_jw_u64_column(&w, pairs, 2, sizeof(pairs[0]), offsetof(struct pair, b));
	cli_jw_key(&w, "or");
	cli_jw_begin_array(&w);
	cli_jw_u64_or_null(&w, true, 5);
	cli_jw_u64_or_null(&w, false, 5);
	cli_jw_end_array(&w);
	ck_assert_str_eq(text(&b), "{\"raw\":0.2,\"v\":[7,8,9],\"none\":[],\"b\":[2,4],"
				   "\"or\":[5,null]");
	/* Lines: after the comma, before the element, the key or the end. */
	b.len = 0;
	cli_jw_key(&w, "lines");
	cli_jw_begin_array(&w);
	for (int i = 0; i < 2; i++) {
		cli_jw_newline(&w);
		cli_jw_begin_object(&w);
		cli_jw_key_u64(&w, "i", (uint64_t)i);
		cli_jw_end_object(&w);
		ck_assert_str_eq(text(&b), i ? ",\n{\"i\":1}" : ",\"lines\":[\n{\"i\":0}");
		b.len = 0; /* written out: the writer needs none of it */
	}
	cli_jw_newline(&w);
	cli_jw_end_array(&w);
	cli_jw_newline(&w);
	cli_jw_key_u64(&w, "last", 1);
	cli_jw_end_object(&w);
	ck_assert_int_eq(cli_jw_finish(&w), 0);
	ck_assert_str_eq(text(&b), "\n],\n\"last\":1}");
	cli_buf_fini(&b);
}
END_TEST

struct print_call {
	bool malformed;
	int status;
};

static void do_print(void *arg)
{
	struct print_call *c = arg;
	struct cli_buf b = {0};
	struct cli_jw w;
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key_str(&w, "a", "b");
	if (!c->malformed)
		cli_jw_end_object(&w);
	c->status = cli_jw_print(&w);
	ck_assert_ptr_null(b.p);
}

START_TEST(json_print)
{
	char out[256], err[256];
	struct print_call c = {0};
	caught(do_print, &c, out, err, sizeof(out));
	ck_assert_int_eq(c.status, CLI_OK);
	ck_assert_str_eq(out, "{\"a\":\"b\"}\n");
	ck_assert_str_eq(err, "");
	/* Unbalanced: nothing on stdout, a line on stderr, and a failure. */
	c.malformed = true;
	caught(do_print, &c, out, err, sizeof(out));
	ck_assert_int_eq(c.status, CLI_FAIL);
	ck_assert_str_eq(out, "");
	ck_assert_ptr_nonnull(strstr(err, "malformed"));
}
END_TEST

/* What cli_bytes printed before it kept to integers: printf's %.1f of the quotient. */
static const char *bytes_by_printf(char buf[32], uint64_t bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (bytes < 1024) {
		snprintf(buf, 32, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	double v = (double)bytes;
	size_t u = 0;
	for (v /= 1024; v >= 1024 && u + 1 < 6; u++)
		v /= 1024;
	snprintf(buf, 32, "%.1f %s", v, units[u]);
	return buf;
}

START_TEST(bytes_as_printf)
{
	char a[32], b[32];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 300000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* Every magnitude, and the ties and unit edges of each. */
		uint64_t n = x >> (x % 60 + 4), d = 1ull << (10 * (x % 5 + 1));
		uint64_t pick[] = {n, d / 20 * (x % 40), d - 1 - (x % 3), d * 1024 - (x % 64) * 8,
				   (d / 20) * (2 * (x % 100) + 1)};
		for (size_t k = 0; k < sizeof(pick) / sizeof(pick[0]); k++)
			ck_assert_str_eq(cli_bytes(a, pick[k], false), bytes_by_printf(b, pick[k]));
	}
	ck_assert_str_eq(cli_bytes(a, 1280, false), "1.2 KiB");
	ck_assert_str_eq(cli_bytes(a, 1048575, false), "1024.0 KiB");
	ck_assert_str_eq(cli_bytes(a, 4456448, true), "4456448");
	ck_assert_str_eq(cli_bytes(a, UINT64_MAX, false), bytes_by_printf(b, UINT64_MAX));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cli-opts");
	TCase *tc = test_tcase(s, "opts:parse", 10);
	test_add(tc, opts_accepted, opts_usage_errors, opts_help, opts_trace_operand,
		 opts_sizes_lists);
	tc = test_tcase(s, "json:write", 10);
	test_add(tc, json_nested_commas, json_scripts, json_string_escaping, json_numbers,
		 json_limits, json_picture_pieces, json_print);
	tc = test_tcase(s, "numbers:text", 60);
	test_add(tc, bytes_as_printf);
	return s;
}

TEST_MAIN(suite);

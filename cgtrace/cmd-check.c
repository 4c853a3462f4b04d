/* SPDX-License-Identifier: MIT */
/* cgtrace check: a run held to memory limits, for CI: exit 1 when one is broken. */
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check-eval.h"
#include "check-junit.h"
#include "check-rules.h"
#include "job-load.h"
#include "job-text.h"
#include "measure.h"

/* Its exit statuses: CLI_OK and CLI_USAGE as every command's, and these two. */
enum { CHECK_BROKEN = 1, CHECK_UNREADABLE = 3 };

enum check_format { CHECK_TEXT, CHECK_JUNIT };

struct check_args {
	struct cli_list peak, rules;
	const char *leaked, *allocs, *growth, *baseline, *increase, *out;
	enum check_format format;
	enum cli_site site;
	size_t jobs, warmup;
	bool exact;
};

static const struct cli_choice formats[] = {
	{"text", "a line per broken limit, then the totals\n(the default)"},
	{"junit", "a JUnit XML report for CI: a testcase per limit\n"
		  "and process, a failure per broken one"},
	{NULL, NULL},
};

static int run(int argc, char **argv);

const struct cli_cmd cli_check = {
	.name = "check",
	.args = "[--max-peak DEVICE=SIZE]... [--max-leaked SIZE] [--max-allocs N] "
		"[--max-growth-per-update SIZE] [--baseline BASE --max-increase PCT] "
		"[--rules FILE]... [--format text|junit] [-o FILE] [--bytes] [--warmup K] "
		"[--jobs N] TRACE... | DIR",
	.help = "Holds a run, a trace or a job (several traces, a folder), to memory\n"
		"limits, for CI (docs/compare.md). Exit status 0 when every limit holds,\n"
		"1 when one is broken (a line for each: the limit, the value measured,\n"
		"the process or rank and device, the top site responsible), 2 for a\n"
		"usage error or a bad rules file, 3 when a trace cannot be read.\n\n"
		"A peak is the most bytes live at once of the allocations the probe\n"
		"recorded (its own memory is never among them), per process and device\n"
		"as summary prints them (cpu, cuda:0; globs such as cuda:* match\n"
		"several), or summed over every process on a physical GPU (gpu:UUID,\n"
		"gpu:*, a job's). Sizes take B, KiB, MiB, GiB, TiB (powers of 1024) or\n"
		"KB, MB, GB, TB (powers of 1000): 64MiB, 1.5GB.\n\n",
	.label_width = 24,
	.opts = (const struct cli_opt[]){
		{.name = "max-peak", .kind = CLI_OPT_LIST, .offset = offsetof(struct check_args, peak),
		 .arg = "DEVICE=SIZE", .help = "each process's peak on DEVICE, or a physical\nGPU's (gpu:UUID)"},
		{.name = "max-leaked", .kind = CLI_OPT_STR, .offset = offsetof(struct check_args, leaked),
		 .arg = "SIZE", .help = "each process's bytes never freed, all devices"},
		{.name = "max-allocs", .kind = CLI_OPT_STR, .offset = offsetof(struct check_args, allocs),
		 .arg = "N", .help = "each process's allocations, all devices"},
		{.name = "max-growth-per-update", .kind = CLI_OPT_STR,
		 .offset = offsetof(struct check_args, growth), .arg = "SIZE",
		 .help = "each process's and device's slope of live bytes\n"
			 "at update ends after warm-up (steps' trend)"},
		{.name = "baseline", .kind = CLI_OPT_STR,
		 .offset = offsetof(struct check_args, baseline), .arg = "BASE",
		 .help = "a trace or job the peaks are held to\n(with max-increase)"},
		{.name = "max-increase", .kind = CLI_OPT_STR,
		 .offset = offsetof(struct check_args, increase), .arg = "PCT",
		 .help = "each peak (process and device, physical GPU)\n"
			 "at most PCT percent above the baseline's"},
		{.name = "rules", .kind = CLI_OPT_LIST, .offset = offsetof(struct check_args, rules),
		 .arg = "FILE",
		 .help = "limits one a line, per device, category, phase\n"
			 "and rank, # comments (docs/compare.md)"},
		{.name = "format", .kind = CLI_OPT_CHOICE, .offset = offsetof(struct check_args, format),
		 .choices = formats},
		{.short_name = 'o', .kind = CLI_OPT_STR, .offset = offsetof(struct check_args, out),
		 .arg = "FILE", .help = "the JUnit report to FILE (default standard output)"},
		CLI_OPT_BYTES(struct check_args, exact),
		{.name = "warmup", .kind = CLI_OPT_COUNT, .offset = offsetof(struct check_args, warmup),
		 .arg = "K", .help = "the first K updates are left out of the growth\n(default 1)"},
		CLI_OPT_SITE(struct check_args, site),
		CLI_OPT_JOBS(struct check_args, jobs),
		{0},
	},
	.help_tail = "\nA rules file holds one limit a line, its qualifiers after it:\n"
		     "  max-peak DEVICE SIZE [category=C] [phase=P] [rank=R]\n"
		     "  max-leaked SIZE [device=D] [rank=R]\n"
		     "  max-allocs N [device=D] [rank=R]\n"
		     "  max-growth-per-update SIZE [device=D] [rank=R]\n"
		     "  max-increase PCT [device=D] [rank=R]      (with --baseline)\n"
		     "A bad line is FILE:LINE: why, and exit status 2.\n",
	.run = run,
};

/* The command line's limits as rules: "--max-peak cpu=1GiB" is "max-peak cpu 1GiB". */
static int option_rules(struct cli_limits *ls, const struct check_args *a)
{
	char line[512], origin[192], err[400];
	const struct {
		const char *opt, *value;
	} single[] = {
		{"max-leaked", a->leaked},
		{"max-allocs", a->allocs},
		{"max-growth-per-update", a->growth},
		{"max-increase", a->increase},
	};
	for (size_t i = 0; i < a->peak.n; i++) {
		const char *v = a->peak.v[i], *eq = strchr(v, '=');
		if (!eq || eq == v)
			return cli_usage_error(&cli_check, "--max-peak: '%s' is not DEVICE=SIZE", v);
		snprintf(line, sizeof(line), "max-peak %.*s %s", (int)(eq - v), v, eq + 1);
		snprintf(origin, sizeof(origin), "--max-peak %s", v);
		if (!cli_limit_parse(ls, line, origin, err, sizeof(err)))
			return cli_usage_error(&cli_check, "--max-peak: %s", err);
	}
	for (size_t i = 0; i < sizeof(single) / sizeof(single[0]); i++) {
		if (!single[i].value)
			continue;
		snprintf(line, sizeof(line), "%s %s", single[i].opt, single[i].value);
		snprintf(origin, sizeof(origin), "--%s %s", single[i].opt, single[i].value);
		if (strchr(single[i].value, ' ') || !cli_limit_parse(ls, line, origin, err, sizeof(err)))
			return cli_usage_error(&cli_check, "--%s: %s", single[i].opt,
					       strchr(single[i].value, ' ') ? "one word" : err);
	}
	return CLI_OK;
}

static int gather_rules(struct cli_limits *ls, const struct check_args *a, bool *growth)
{
	char err[1024];
	int status = option_rules(ls, a);
	if (status != CLI_OK)
		return status;
	for (size_t i = 0; i < a->rules.n; i++)
		if (!cli_limits_read(ls, a->rules.v[i], err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return CLI_USAGE;
		}
	if (!ls->n)
		return cli_usage_error(&cli_check, "no limit given (--max-peak ... or --rules FILE)");
	bool increase = false;
	*growth = false;
	for (size_t i = 0; i < ls->n; i++) {
		increase |= ls->v[i].kind == CLI_LIMIT_INCREASE;
		*growth |= ls->v[i].kind == CLI_LIMIT_GROWTH;
		if (ls->v[i].kind == CLI_LIMIT_INCREASE && !a->baseline) {
			fprintf(stderr, "%s: max-increase needs --baseline BASE\n", ls->v[i].origin);
			return CLI_USAGE;
		}
	}
	if (a->baseline && !increase)
		return cli_usage_error(&cli_check, "--baseline goes with a max-increase limit");
	return CLI_OK;
}

struct side_read {
	struct cli_measure m;
	char *const *args;
	size_t n;
	const struct cli_measure_opts *o;
	int status;
};

static void *read_side(void *arg)
{
	struct side_read *s = arg;
	s->status = cli_measure_read(&s->m, (const char *const *)s->args, s->n, s->o);
	return NULL;
}

/* Both the run and its baseline, on two threads. */
static void read_sides(struct side_read *run, struct side_read *base)
{
	pthread_t t;
	bool threaded = base->n && pthread_create(&t, NULL, read_side, base) == 0;
	if (base->n && !threaded)
		read_side(base);
	read_side(run);
	if (threaded)
		pthread_join(t, NULL);
}

static void print_text(FILE *f, const struct cli_check *c, size_t n_limits,
		       const struct cli_measure *m)
{
	char procs[48];
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].state == CLI_CHECK_BROKEN)
			fprintf(f, "%s\n", c->v[i].line);
		else if (c->v[i].state == CLI_CHECK_UNMEASURED)
			fprintf(stderr, "cgtrace check: note: %s\n", c->v[i].line);
	}
	/* The checks: one per limit and process, the unreadable traces apart. */
	size_t n = c->n - c->unreadable;
	cli_job_processes(procs, m->n_procs - m->n_unread);
	if (c->broken)
		fprintf(f, "check: %zu of %zu checks broken (%zu limit%s, %s)\n", c->broken, n,
			n_limits, n_limits == 1 ? "" : "s", procs);
	else if (n)
		fprintf(f, "check: every limit holds (%zu check%s of %zu limit%s, %s)\n", n,
			n == 1 ? "" : "s", n_limits, n_limits == 1 ? "" : "s", procs);
	if (c->unreadable)
		fprintf(f, "check: %zu trace%s could not be read\n", c->unreadable,
			c->unreadable == 1 ? "" : "s");
}

/* The suite's name: the inputs as given. */
static void inputs_name(char *buf, size_t len, int argc, char **argv)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int i = optind; i < argc && at + 1 < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i > optind ? " " : "", argv[i]);
}

static int report(const struct cli_check *c, const struct cli_limits *ls,
		  const struct cli_measure *m, const struct check_args *a, const char *name)
{
	struct cli_out out;
	if (cli_out_open(&out, a->out ? a->out : "-") != CLI_OK)
		return CHECK_UNREADABLE;
	if (a->format == CHECK_JUNIT) {
		cli_check_junit(out.f, c, name);
		/* The lines too, where they do not mix with the report. */
		print_text(a->out ? stdout : stderr, c, ls->n, m);
	} else {
		print_text(out.f, c, ls->n, m);
	}
	bool ok = !ferror(out.f) && fflush(out.f) == 0;
	if (cli_out_close(&out, ok) != CLI_OK)
		return CHECK_UNREADABLE;
	return CLI_OK;
}

static int run(int argc, char **argv)
{
	struct check_args a = {.warmup = 1};
	struct cli_limits ls = {0};
	bool growth = false;
	int status;
	if (!cli_parse(&cli_check, argc, argv, &a, &status))
		return status;
	if (optind >= argc)
		return cli_usage_error(&cli_check, "missing TRACE argument");
	if (a.out && a.format != CHECK_JUNIT)
		return cli_usage_error(&cli_check, "-o goes with --format junit");
	status = gather_rules(&ls, &a, &growth);
	if (status != CLI_OK) {
		cli_limits_free(&ls);
		return status;
	}
	cli_site_mode = a.site;
	bool all_sites = false;
	for (size_t i = 0; i < ls.n; i++)
		all_sites |= ls.v[i].kind == CLI_LIMIT_LEAKED || ls.v[i].kind == CLI_LIMIT_ALLOCS;
	const struct cli_measure_opts mo = {.jobs = a.jobs ? a.jobs : 1, .warmup = a.warmup,
					    .growth = growth, .all_sites = all_sites};
	char *base_arg[] = {(char *)a.baseline};
	struct side_read in = {.args = argv + optind, .n = (size_t)(argc - optind), .o = &mo};
	struct side_read base = {.args = base_arg, .n = a.baseline ? 1 : 0, .o = &mo};
	read_sides(&in, &base);
	struct cli_check c;
	char name[1024];
	inputs_name(name, sizeof(name), argc, argv);
	bool unreadable = in.status != CLI_OK || (a.baseline && base.status != CLI_OK);
	/* Nothing read on a side: the report holds the unreadable traces alone. */
	bool nothing = in.m.n_unread == in.m.n_procs ||
		       (a.baseline && base.m.n_unread == base.m.n_procs);
	const struct cli_limits none = {0};
	if (in.status < 0 || (a.baseline && base.status < 0) ||
	    cli_check_eval(nothing ? &none : &ls, &in.m, a.baseline ? &base.m : NULL, a.exact,
			   &c) < 0) {
		fprintf(stderr, "cgtrace check: out of memory\n");
		status = CHECK_UNREADABLE;
	} else {
		status = report(&c, &ls, &in.m, &a, name);
		if (status == CLI_OK)
			status = unreadable ? CHECK_UNREADABLE : c.broken ? CHECK_BROKEN : CLI_OK;
		cli_check_free(&c);
	}
	cli_measure_free(&in.m);
	cli_measure_free(&base.m);
	cli_limits_free(&ls);
	return status;
}

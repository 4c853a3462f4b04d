/* SPDX-License-Identifier: MIT */
/* cgtrace steps: memory per training update, its trend, and what outlives its update. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "step-growth.h"
#include "step-text.h"

struct steps_args {
	const char *device;
	size_t warmup, top;
	enum cli_site site;
	bool phases, growth, json, csv, exact;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_steps = {
	.name = "steps",
	.args = "[--device D] [--phases] [--warmup K] [--growth] [-n N] [--site python|native] "
		"[--json | --csv] [--bytes] TRACE",
	.help = "Memory per training update (docs/steps.md): one row per update (and per\n"
		"phase with --phases), each device's peak in it and when, the live bytes\n"
		"at its start and end, the allocations made, the bytes by category at its\n"
		"peak; then each device's trend: the least-squares slope of the live\n"
		"bytes at update ends after warm-up, steady when at most 1 KiB per update.\n"
		"Updates are the ones the trace marks (cgprobe_update: the C API, the\n"
		"Python module, NVTX update ranges), else they run from one forward step\n"
		"to the next.\n\n",
	.label_width = 16,
	.opts = (const struct cli_opt[]){
		{.name = "device", .kind = CLI_OPT_STR, .offset = offsetof(struct steps_args, device),
		 .arg = "D", .help = "only device D (cpu, cuda:0, ...)"},
		{.name = "phases", .offset = offsetof(struct steps_args, phases),
		 .help = "a row per phase of each update too (forward, backward,\n"
			 "optimizer, the trace's own phases; - for time in none)"},
		{.name = "warmup", .kind = CLI_OPT_COUNT, .offset = offsetof(struct steps_args, warmup),
		 .arg = "K", .help = "the first K updates are warm-up, left out of the trend\n"
				     "and of growth (default 1)"},
		{.name = "growth", .offset = offsetof(struct steps_args, growth),
		 .help = "allocations made in one update after warm-up and still live\n"
			 "at the end of every later update, by site: the sites that grew\n"
			 "in more than one update first, then by bytes"},
		{.short_name = 'n', .kind = CLI_OPT_COUNT, .offset = offsetof(struct steps_args, top),
		 .arg = "N", .help = "growth sites shown (default 20, 0 = all)"},
		CLI_OPT_SITE(struct steps_args, site),
		{.name = "json", .offset = offsetof(struct steps_args, json),
		 .help = "{\"updates_from\", \"warmup\", \"devices\", \"updates\": [{update,\n"
			 "start_ns, end_ns, time_ns, warmup, open, devices: [{device,\n"
			 "peak_bytes, peak_ns, start_bytes, end_bytes, allocs,\n"
			 "peak_by_category}], phases (--phases)}], \"trend\": [{device,\n"
			 "fitted, bytes_per_update, steady}], \"growth\" (--growth):\n"
			 "[{device, site, bytes, count, updates, first_update, last_update,\n"
			 "bytes_per_update, frames}]}"},
		{.name = "csv", .offset = offsetof(struct steps_args, csv),
		 .help = "one line per row and device: update, phase, device, start_ns,\n"
			 "end_ns, time_ns, warmup, open, peak_bytes, peak_ns, start_bytes,\n"
			 "end_bytes, allocs, then bytes by category at the peak; with\n"
			 "--growth, the growth sites instead"},
		CLI_OPT_BYTES(struct steps_args, exact),
		{0},
	},
	.run = run,
};

/* The devices shown: every one, or --device's (-1: the trace has no such device). */
static long device_index(const struct cgtrace_steps *st, const char *device)
{
	for (size_t d = 0; device && d < st->n_devices; d++)
		if (!strcmp(st->devices[d], device))
			return (long)d;
	return device ? -1 : -2;
}

static bool shown(long only, size_t d)
{
	return only < 0 || (size_t)only == d;
}

/* ---- text ---- */

/* Which categories any shown row of device d had at its peak: their columns, no others. */
static unsigned category_columns(const struct cgtrace_steps *st, size_t d)
{
	unsigned mask = 0;
	for (size_t r = 0; r < st->n_rows; r++)
		for (unsigned c = 0; c < CGTRACE_CAT_COUNT; c++)
			if (st->figures[d][r].peak_by_category[c])
				mask |= 1u << c;
	return mask;
}

static void print_row(const struct cgtrace_steps *st, size_t d, size_t r, unsigned cats,
		      const struct steps_args *a)
{
	const struct cgtrace_step_row *row = &st->rows[r];
	const struct cgtrace_step_figures *f = &st->figures[d][r];
	char b[8][32], u[32], at[40];
	if (row->is_phase)
		u[0] = '\0';
	else
		snprintf(u, sizeof(u), "%llu", (unsigned long long)row->update);
	snprintf(at, sizeof(at), "+%s", cli_ns(b[0], f->peak_ns - row->start_ns));
	printf("%7s", u);
	if (a->phases)
		printf("  %-12.12s", row->is_phase ? row->phase ? row->phase : "-" : "");
	printf(" %11s %11s %11s %11s %11s %11s %9s", cli_ns(b[1], row->start_ns),
	       cli_ns(b[2], row->time_ns), cli_bytes(b[3], f->peak_bytes, a->exact), at,
	       cli_bytes(b[4], f->start_bytes, a->exact), cli_bytes(b[5], f->end_bytes, a->exact),
	       cli_count(b[6], f->allocs));
	for (unsigned c = 0; c < CGTRACE_CAT_COUNT; c++)
		if (cats & 1u << c)
			printf(" %11s", cli_bytes(b[7], f->peak_by_category[c], a->exact));
	if (row->warmup || row->open)
		printf("  %s%s%s", row->warmup ? "warm-up" : "", row->warmup && row->open ? ", " : "",
		       row->open ? "open" : "");
	putchar('\n');
}

static void print_trend(const struct cgtrace_steps *st, size_t d, const struct steps_args *a)
{
	char line[512];
	printf("%s\n", cli_step_trend(line, sizeof(line), st, d, a->exact));
}

static void print_device(const struct cgtrace_steps *st, size_t d, const struct steps_args *a)
{
	unsigned cats = category_columns(st, d);
	printf("\n%s:\n%7s", st->devices[d], "update");
	if (a->phases)
		printf("  %-12s", "phase");
	printf(" %11s %11s %11s %11s %11s %11s %9s", "start", "length", "peak", "peak at",
	       "at start", "at end", "allocs");
	for (unsigned c = 0; c < CGTRACE_CAT_COUNT; c++)
		if (cats & 1u << c)
			printf(" %11s", cgtrace_category_name((enum cgtrace_category)c));
	putchar('\n');
	for (size_t r = 0; r < st->n_rows; r++)
		if (a->phases || !st->rows[r].is_phase)
			print_row(st, d, r, cats, a);
	print_trend(st, d, a);
}

static void print_growth(struct cli_sites *s, const struct step_growth_row *rows, size_t n,
			 const struct cgtrace_steps *st, const struct steps_args *a)
{
	char b[4][32], name[600];
	printf("\nGrowth: allocations made in one update after the first %llu and still live at the\n"
	       "end of every later update, by site (sites that grew in more than one update first):\n",
	       (unsigned long long)st->warmup);
	if (!n) {
		printf("none: each was freed before a later update ended.\n");
		return;
	}
	size_t show = a->top && a->top < n ? a->top : n;
	printf("%11s %11s %8s %7s %7s %11s  %-10s %s\n", "bytes", "allocs", "updates", "first",
	       "last", "per update", "device", "site");
	for (size_t i = 0; i < show; i++) {
		const struct step_growth_row *r = &rows[i];
		printf("%11s %11s %8s %7llu %7llu %11s  %-10s %s\n", cli_bytes(b[0], r->bytes, a->exact),
		       cli_count(b[1], r->count), cli_count(b[2], r->updates),
		       (unsigned long long)r->first, (unsigned long long)r->last,
		       cli_bytes(b[3], step_growth_per_update(r), a->exact), r->device,
		       cli_frame_name(name, sizeof(name), r->site));
	}
	if (show < n)
		printf("... and %zu more sites (-n 0 lists all)\n", n - show);
	(void)s;
}

static void print_human(const char *path, const struct cgtrace_steps *st, long only,
			const struct steps_args *a)
{
	char b[32];
	printf("%s: %s update%s, %s\n", cli_path_name(path), cli_count(b, st->updates),
	       st->updates == 1 ? "" : "s",
	       cli_updates_from_words(st->from));
	for (size_t d = 0; d < st->n_devices; d++)
		if (shown(only, d))
			print_device(st, d, a);
}

/* ---- JSON ---- */

static void json_figures(struct cli_jw *w, const struct cgtrace_steps *st, size_t r, long only)
{
	cli_jw_key(w, "devices");
	cli_jw_begin_array(w);
	for (size_t d = 0; d < st->n_devices; d++) {
		if (!shown(only, d))
			continue;
		const struct cgtrace_step_figures *f = &st->figures[d][r];
		cli_jw_begin_object(w);
		cli_jw_key_str(w, "device", st->devices[d]);
		cli_json_step_figures(w, f);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

static void json_times(struct cli_jw *w, const struct cgtrace_step_row *row)
{
	cli_jw_key_u64(w, "start_ns", row->start_ns);
	cli_jw_key_u64(w, "end_ns", row->end_ns);
	cli_jw_key_u64(w, "time_ns", row->time_ns);
}

static void json_rows(struct cli_jw *w, const struct cgtrace_steps *st, long only, bool phases)
{
	cli_jw_key(w, "updates");
	cli_jw_begin_array(w);
	for (size_t r = 0; r < st->n_rows; r++) {
		const struct cgtrace_step_row *row = &st->rows[r];
		if (row->is_phase)
			continue;
		cli_jw_begin_object(w);
		cli_jw_key_u64(w, "update", row->update);
		json_times(w, row);
		cli_jw_key_bool(w, "warmup", row->warmup);
		cli_jw_key_bool(w, "open", row->open);
		json_figures(w, st, r, only);
		if (phases) {
			cli_jw_key(w, "phases");
			cli_jw_begin_array(w);
			for (size_t p = r + 1; p < st->n_rows && st->rows[p].is_phase; p++) {
				cli_jw_begin_object(w);
				cli_jw_key(w, "phase");
				if (st->rows[p].phase)
					cli_jw_str(w, st->rows[p].phase);
				else
					cli_jw_null(w);
				json_times(w, &st->rows[p]);
				json_figures(w, st, p, only);
				cli_jw_end_object(w);
			}
			cli_jw_end_array(w);
		}
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

static void json_growth(struct cli_jw *w, struct cli_sites *s, const struct step_growth_row *rows,
			size_t n)
{
	char name[600];
	cli_jw_key(w, "growth");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const struct step_growth_row *r = &rows[i];
		cli_jw_begin_object(w);
		cli_jw_key_str(w, "device", r->device);
		cli_jw_key_str(w, "site", cli_frame_name(name, sizeof(name), r->site));
		cli_jw_key_u64(w, "bytes", r->bytes);
		cli_jw_key_u64(w, "count", r->count);
		cli_jw_key_u64(w, "updates", r->updates);
		cli_jw_key_u64(w, "first_update", r->first);
		cli_jw_key_u64(w, "last_update", r->last);
		cli_jw_key_u64(w, "bytes_per_update", step_growth_per_update(r));
		cli_jw_key(w, "frames");
		cli_json_frames(w, cli_sites_stack(s, r->stack_id), false);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

static int print_json(const struct cgtrace_steps *st, long only, const struct steps_args *a,
		      struct cli_sites *s, const struct step_growth_row *grows, size_t ng)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key_str(&w, "updates_from", cli_updates_from_name(st->from));
	cli_jw_key_u64(&w, "warmup", st->warmup);
	cli_jw_key(&w, "devices");
	cli_jw_begin_array(&w);
	for (size_t d = 0; d < st->n_devices; d++)
		if (shown(only, d))
			cli_jw_str(&w, st->devices[d]);
	cli_jw_end_array(&w);
	json_rows(&w, st, only, a->phases);
	cli_jw_key(&w, "trend");
	cli_jw_begin_array(&w);
	for (size_t d = 0; d < st->n_devices; d++) {
		if (!shown(only, d))
			continue;
		const struct cgtrace_step_trend *t = &st->trends[d];
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "device", st->devices[d]);
		cli_jw_key_u64(&w, "fitted", t->fitted);
		cli_jw_key(&w, "bytes_per_update");
		if (t->fitted >= 2)
			cli_jw_double(&w, t->bytes_per_update);
		else
			cli_jw_null(&w);
		cli_jw_key_bool(&w, "steady", t->steady);
		cli_jw_end_object(&w);
	}
	cli_jw_end_array(&w);
	if (a->growth)
		json_growth(&w, s, grows, ng);
	cli_jw_end_object(&w);
	return cli_jw_print(&w);
}

/* ---- CSV ---- */

static void print_csv(const struct cgtrace_steps *st, long only)
{
	printf("update,phase,device,start_ns,end_ns,time_ns,warmup,open,peak_bytes,peak_ns,"
	       "start_bytes,end_bytes,allocs");
	for (unsigned c = 0; c < CGTRACE_CAT_COUNT; c++)
		printf(",%s", cgtrace_category_name((enum cgtrace_category)c));
	putchar('\n');
	for (size_t r = 0; r < st->n_rows; r++) {
		const struct cgtrace_step_row *row = &st->rows[r];
		for (size_t d = 0; d < st->n_devices; d++) {
			if (!shown(only, d))
				continue;
			const struct cgtrace_step_figures *f = &st->figures[d][r];
			printf("%llu,%s,%s,%llu,%llu,%llu,%d,%d,%llu,%llu,%llu,%llu,%llu",
			       (unsigned long long)row->update,
			       row->is_phase ? row->phase ? row->phase : "-" : "", st->devices[d],
			       (unsigned long long)row->start_ns, (unsigned long long)row->end_ns,
			       (unsigned long long)row->time_ns, row->warmup, row->open,
			       (unsigned long long)f->peak_bytes, (unsigned long long)f->peak_ns,
			       (unsigned long long)f->start_bytes, (unsigned long long)f->end_bytes,
			       (unsigned long long)f->allocs);
			for (unsigned c = 0; c < CGTRACE_CAT_COUNT; c++)
				printf(",%llu", (unsigned long long)f->peak_by_category[c]);
			putchar('\n');
		}
	}
}

/* A site's name as a CSV field: quoted, its quotes doubled. */
static void csv_field(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void print_growth_csv(const struct step_growth_row *rows, size_t n)
{
	char name[600];
	printf("device,site,bytes,count,updates,first_update,last_update,bytes_per_update\n");
	for (size_t i = 0; i < n; i++) {
		const struct step_growth_row *r = &rows[i];
		printf("%s,", r->device);
		csv_field(cli_frame_name(name, sizeof(name), r->site));
		printf(",%llu,%llu,%llu,%llu,%llu,%llu\n", (unsigned long long)r->bytes,
		       (unsigned long long)r->count, (unsigned long long)r->updates,
		       (unsigned long long)r->first, (unsigned long long)r->last,
		       (unsigned long long)step_growth_per_update(r));
	}
}

/* ---- the command ---- */

static void print_warning(void *user, const char *line)
{
	(void)user;
	fprintf(stderr, "cgtrace: %s\n", line);
}

static int show(const char *path, const struct cgtrace_steps *st, const struct steps_args *a)
{
	long only = device_index(st, a->device);
	if (only == -1) {
		fprintf(stderr, "%s: no memory records on device %s\n", cli_path_name(path),
			a->device);
		return CLI_FAIL;
	}
	if (st->from == CGTRACE_UPDATES_NONE && !a->json && !a->csv) {
		printf("%s: no training updates: %s (docs/steps.md)\n", cli_path_name(path),
		       cli_updates_from_words(CGTRACE_UPDATES_NONE));
		return CLI_OK;
	}
	struct cli_sites s = {0};
	struct step_growth_row *grows = NULL;
	size_t ng = 0;
	if (a->growth) {
		if (cli_sites_attach(&s, st->doc, path) != CLI_OK)
			return CLI_FAIL;
		if (step_growth_rows(&s, st, a->device, &grows, &ng) < 0) {
			fprintf(stderr, "%s: out of memory\n", cli_path_name(path));
			cli_sites_close(&s);
			return CLI_FAIL;
		}
	}
	int status = CLI_OK;
	if (a->json) {
		status = print_json(st, only, a, &s, grows, ng);
	} else if (a->csv) {
		if (a->growth)
			print_growth_csv(grows, ng);
		else
			print_csv(st, only);
	} else {
		print_human(path, st, only, a);
		if (a->growth)
			print_growth(&s, grows, ng, st, a);
	}
	step_growth_free(grows, ng);
	if (a->growth)
		cli_sites_close(&s);
	return status;
}

static int run(int argc, char **argv)
{
	struct steps_args a = {.warmup = 1, .top = 20};
	int status;
	const char *path = cli_parse_trace(&cli_steps, argc, argv, &a, &status);
	if (!path)
		return status;
	if (a.json && a.csv)
		return cli_usage_error(&cli_steps, "--json and --csv exclude each other");
	cli_site_mode = a.site;
	const struct cgtrace_steps_options o = {.warmup = a.warmup, .phases = a.phases,
						.growth = a.growth};
	const struct cgtrace_read_options ro = {.warn = print_warning};
	struct cgtrace_steps *st;
	char err[2048];
	/* Only growth names sites: the other rows pass the stacks by unread. */
	unsigned flags = a.growth ? 0 : CGTRACE_READ_SKIP_STACKS;
	if (cgtrace_steps_read(path, &ro, flags, &o, &st, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return CLI_FAIL;
	}
	if (err[0])
		fprintf(stderr, "%s\n", err);
	status = show(path, st, &a);
	cgtrace_steps_free(st);
	if (status == CLI_OK && !a.json && (fflush(stdout) || ferror(stdout)))
		return CLI_FAIL;
	return status;
}

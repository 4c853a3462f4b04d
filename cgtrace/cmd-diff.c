/* SPDX-License-Identifier: MIT */
/* cgtrace diff: what changed between two runs, where, and by how much. */
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "job-load.h"
#include "job-text.h"
#include "measure.h"

enum diff_by { DIFF_BY_LINE, DIFF_BY_FUNCTION };

static const struct cli_choice by_choices[] = {
    {"line", "a site is its function, file and line (the default)"},
    {"function", "a site is its function and file, its lines summed: for\n"
                 "commits that move code, whose sites would otherwise\n"
                 "read as gone and new"},
    {NULL, NULL},
};

struct diff_args {
	size_t n, updates, jobs, warmup;
	uint64_t fold;
	enum cli_site site;
	enum diff_by by;
	bool json, exact;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_diff = {
	.name = "diff",
	.args = "[--json] [--bytes] [-n N] [--updates N] [--warmup K] [--site python|native] "
		"[--by line|function] [--fold BYTES] [--jobs N] BASE NEW",
	.help = "What changed from BASE to NEW, each a trace or a job (a folder, as\n"
		"cgprobe -o DIR/ writes it): each process's peak per device, when it\n"
		"came, its bytes by category at the peak, leaked bytes, allocations and\n"
		"growth per update; each physical GPU's summed peak; the peak per update\n"
		"and phase where both have training updates (matched by update number);\n"
		"and the sites whose bytes at the peak changed most. Processes match by\n"
		"rank, sites by their symbolized frame (function, file:line, Python\n"
		"frames included), never by address (docs/compare.md). Changes are\n"
		"signed, NEW - BASE, with the percentage of BASE.\n\n",
	.label_width = 16,
	.opts = (const struct cli_opt[]){
		{.name = "json", .offset = offsetof(struct diff_args, json),
		 .help = "one JSON object: base, new, processes [{base, new, devices\n"
			 "[{device, peak_bytes, leaked_bytes, alloc_count, ...,\n"
			 "updates}]}], gpus, sites; each figure {base, new, change,\n"
			 "percent} (docs/compare.md)"},
		CLI_OPT_BYTES(struct diff_args, exact),
		{.short_name = 'n', .kind = CLI_OPT_COUNT, .offset = offsetof(struct diff_args, n),
		 .arg = "N", .help = "sites shown (default 10, 0 = all)"},
		{.name = "updates", .kind = CLI_OPT_COUNT,
		 .offset = offsetof(struct diff_args, updates), .arg = "N",
		 .help = "update and phase rows shown per device: the N largest\n"
			 "changes, in update order (default 20, 0 = all)"},
		{.name = "warmup", .kind = CLI_OPT_COUNT, .offset = offsetof(struct diff_args, warmup),
		 .arg = "K", .help = "the first K updates are left out of the growth per\n"
				     "update (default 1, as cgtrace steps)"},
		CLI_OPT_SITE(struct diff_args, site),
		{.name = "by", .kind = CLI_OPT_CHOICE, .offset = offsetof(struct diff_args, by),
		 .choices = by_choices},
		{.name = "fold", .kind = CLI_OPT_SIZE, .offset = offsetof(struct diff_args, fold),
		 .arg = "BYTES",
		 .help = "a job: processes whose peak is under BYTES on every device\n"
			 "of both sides fold into one line, as in summary (default\n"
			 "65536; 0 shows every one; --json lists them all)"},
		CLI_OPT_JOBS(struct diff_args, jobs),
		{0},
	},
	.run = run,
};

/* ---- the text ---- */

#define ROW_FMT "%-10s %-10s %-18s %16s %16s %14s %9s\n"

/* "+12.5%", "new" when the base had none, "" when both are 0. */
static const char *pct_text(char buf[32], uint64_t base, uint64_t new)
{
	double p = cli_change_pct(base, new);
	if (base == new)
		snprintf(buf, 32, "%s", base ? "+0.0%" : "");
	else if (isnan(p))
		snprintf(buf, 32, "new");
	else
		snprintf(buf, 32, "%+.1f%%", p);
	return buf;
}

static const char *count_change(char buf[40], uint64_t base, uint64_t new)
{
	char c[32];
	uint64_t m = new >= base ? new - base : base - new;
	snprintf(buf, 40, "%s%s", new >= base ? "+" : "-", cli_count(c, m));
	return buf;
}

/* A figure's row: sizes or counts, either side possibly absent ("-"). */
static void row(const char *who, const char *device, const char *what, bool has_a, uint64_t a,
		bool has_b, uint64_t b, bool bytes, bool exact)
{
	char x[32] = "-", y[32] = "-", c[40] = "", p[32] = "";
	if (has_a)
		(void)(bytes ? cli_bytes(x, a, exact) : cli_count(x, a));
	if (has_b)
		(void)(bytes ? cli_bytes(y, b, exact) : cli_count(y, b));
	if (has_a && has_b) {
		(void)(bytes ? cli_signed_bytes(c, cli_change(a, b), exact) : count_change(c, a, b));
		pct_text(p, a, b);
	}
	printf(ROW_FMT, who, device, what, x, y, c, p);
}

/* "update 3, forward", "after update 3", "forward", "-". */
static const char *moment_text(char *buf, size_t len, const struct cgtrace_moment *m)
{
	if (m->update)
		snprintf(buf, len, "update %llu%s%s", (unsigned long long)m->update,
			 m->phase ? ", " : "", m->phase ? m->phase : "");
	else if (m->after)
		snprintf(buf, len, "after update %llu", (unsigned long long)m->after);
	else
		snprintf(buf, len, "%s", m->phase ? m->phase : "-");
	return buf;
}

static void print_when(const char *who, const char *device, const struct cli_mdev *a,
		       const struct cli_mdev *b)
{
	char x[32] = "-", y[32] = "-", mx[96] = "-", my[96] = "-";
	if (a) {
		cli_ns(x, a->peak_ns);
		moment_text(mx, sizeof(mx), &a->when);
	}
	if (b) {
		cli_ns(y, b->peak_ns);
		moment_text(my, sizeof(my), &b->when);
	}
	printf(ROW_FMT, who, device, "peak at", x, y, "", "");
	if (strcmp(mx, "-") || strcmp(my, "-"))
		printf(ROW_FMT, who, device, "peak in", mx, my, "", "");
}

static void print_device(const char *who, const struct cli_mdev *a, const struct cli_mdev *b,
			 bool exact)
{
	const char *dev = a ? a->device : b->device;
	char x[40] = "-", y[40] = "-", c[40] = "";
	row(who, dev, "peak", a, a ? a->peak_bytes : 0, b, b ? b->peak_bytes : 0, true, exact);
	print_when(who, dev, a, b);
	for (int k = 0; k < CGTRACE_CAT_COUNT; k++) {
		bool ha = a && a->has_categories, hb = b && b->has_categories;
		uint64_t va = ha ? a->categories[k] : 0, vb = hb ? b->categories[k] : 0;
		char what[40];
		if ((!ha && !hb) || (!va && !vb))
			continue;
		snprintf(what, sizeof(what), "  %s", cgtrace_category_name((enum cgtrace_category)k));
		row(who, dev, what, ha, va, hb, vb, true, exact);
	}
	row(who, dev, "leaked", a, a ? a->leaked_bytes : 0, b, b ? b->leaked_bytes : 0, true,
	    exact);
	row(who, dev, "allocs", a, a ? a->alloc_count : 0, b, b ? b->alloc_count : 0, false, exact);
	bool ga = a && a->trend.fitted >= 2, gb = b && b->trend.fitted >= 2;
	if (!ga && !gb)
		return;
	if (ga)
		cli_signed_bytes(x, a->trend.bytes_per_update, exact);
	if (gb)
		cli_signed_bytes(y, b->trend.bytes_per_update, exact);
	if (ga && gb)
		cli_signed_bytes(c, b->trend.bytes_per_update - a->trend.bytes_per_update, exact);
	printf(ROW_FMT, who, dev, "growth per update", x, y, c, "");
}

/* The largest changes first, to choose the rows shown; then update order. */
struct shown_row {
	size_t pair;
	double change;
};

static int by_change(const void *x, const void *y)
{
	const struct shown_row *p = x, *q = y;
	double a = fabs(p->change), b = fabs(q->change);
	if (a != b)
		return a > b ? -1 : 1;
	return (p->pair > q->pair) - (p->pair < q->pair);
}

static int by_pair(const void *x, const void *y)
{
	const struct shown_row *p = x, *q = y;
	return (p->pair > q->pair) - (p->pair < q->pair);
}

static int print_updates(const char *who, const struct cli_mproc *pa, const struct cli_mproc *pb,
			 const struct cli_mdev *a, const struct cli_mdev *b,
			 const struct diff_args *o)
{
	struct cli_pair *rp;
	size_t nr;
	if (!a || !b || !a->figures || !b->figures)
		return 0;
	if (cli_pair_rows(pa, pb, &rp, &nr) < 0)
		return -1;
	struct shown_row *s = malloc((nr ? nr : 1) * sizeof(*s));
	if (!s) {
		free(rp);
		return -1;
	}
	for (size_t i = 0; i < nr; i++)
		s[i] = (struct shown_row){i, cli_change(a->figures[rp[i].base].peak_bytes,
							b->figures[rp[i].new].peak_bytes)};
	size_t shown = o->updates && o->updates < nr ? o->updates : nr;
	if (shown < nr) {
		qsort(s, nr, sizeof(*s), by_change);
		qsort(s, shown, sizeof(*s), by_pair);
	}
	if (nr)
		printf("\n%s %s: peak per update and phase, %zu of %zu rows both have\n", who,
		       a->device, shown, nr);
	if (nr)
		printf("%8s %-12s %16s %16s %14s %9s\n", "update", "phase", "base", "new", "change",
		       "");
	for (size_t i = 0; i < shown; i++) {
		const struct cgtrace_step_row *r = &pa->rows[rp[s[i].pair].base];
		uint64_t x = a->figures[rp[s[i].pair].base].peak_bytes;
		uint64_t y = b->figures[rp[s[i].pair].new].peak_bytes;
		char bx[32], by[32], c[40], p[32];
		printf("%8llu %-12s %16s %16s %14s %9s\n", (unsigned long long)r->update,
		       r->is_phase ? (r->phase ? r->phase : "-") : "(update)",
		       cli_bytes(bx, x, o->exact), cli_bytes(by, y, o->exact),
		       cli_signed_bytes(c, cli_change(x, y), o->exact), pct_text(p, x, y));
	}
	free(s);
	free(rp);
	return 0;
}

/* A process's name: its rank, else its pid in NEW where it is there (--json has both). */
static const char *pair_name(char *buf, size_t len, const struct cli_mproc *a,
			     const struct cli_mproc *b)
{
	snprintf(buf, len, "%s", b ? b->name : a->name);
	return buf;
}

static const struct cli_mproc *side_proc(const struct cli_measure *m, long i)
{
	return i >= 0 && m->procs[i].read ? &m->procs[i] : NULL;
}

static int print_sites(const struct cli_measure *ma, const struct cli_measure *mb,
		       const struct cli_pair *pp, size_t np, const struct diff_args *o);

/* Whether a process's every device peaked under fold (NULL: not on that side). */
static bool small(const struct cli_mproc *p, uint64_t fold)
{
	for (size_t d = 0; p && d < p->n_devs; d++)
		if (p->devs[d].peak_bytes >= fold)
			return false;
	return true;
}

/*
 * The pairs of small processes (a shell's fork children, a launcher) left
 * out of the rows, as summary folds them: their count and the largest
 * change of a peak among them, which says whether any is worth a look.
 */
static void print_folded(size_t n, uint64_t largest, const struct diff_args *o)
{
	char f[32], l[32];
	if (!n)
		return;
	printf("... and %zu process%s with peaks under %s on both sides (largest change of a peak "
	       "%s; --fold 0 shows them)\n",
	       n, n == 1 ? "" : "es", cli_bytes(f, o->fold, false), cli_bytes(l, largest, o->exact));
}

static int print_human(const struct cli_measure *ma, const struct cli_measure *mb,
		       const struct cli_pair *pp, size_t np, char **argv,
		       const struct diff_args *o)
{
	char who[112], c[48];
	size_t folded = 0;
	uint64_t folded_change = 0;
	printf("base: %s (%s)\n", argv[0], cli_job_processes(c, ma->n_procs));
	printf("new:  %s (%s)\n\n", argv[1], cli_job_processes(c, mb->n_procs));
	printf(ROW_FMT, "process", "device", "", "base", "new", "change", "");
	for (size_t i = 0; i < np; i++) {
		const struct cli_mproc *a = side_proc(ma, pp[i].base), *b = side_proc(mb, pp[i].new);
		if (!a && !b)
			continue;
		struct cli_pair *dp;
		size_t nd;
		if (cli_pair_devs(a, b, &dp, &nd) < 0)
			return -1;
		/*
		 * One process each side is the whole answer, however small; a
		 * process of one side only is news, however small.
		 */
		if (o->fold && np > 1 && a && b && small(a, o->fold) && small(b, o->fold)) {
			for (size_t d = 0; d < nd; d++) {
				uint64_t x = dp[d].base >= 0 ? a->devs[dp[d].base].peak_bytes : 0;
				uint64_t y = dp[d].new >= 0 ? b->devs[dp[d].new].peak_bytes : 0;
				uint64_t m = x > y ? x - y : y - x;
				folded_change = m > folded_change ? m : folded_change;
			}
			folded++;
			free(dp);
			continue;
		}
		pair_name(who, sizeof(who), a, b);
		for (size_t d = 0; d < nd; d++)
			print_device(who, dp[d].base >= 0 ? &a->devs[dp[d].base] : NULL,
				     dp[d].new >= 0 ? &b->devs[dp[d].new] : NULL, o->exact);
		free(dp);
	}
	print_folded(folded, folded_change, o);
	struct cli_pair *gp;
	size_t ng;
	if (cli_pair_gpus(ma, mb, &gp, &ng) < 0)
		return -1;
	if (ng)
		printf("\n%-40s %16s %16s %14s %9s\n", "physical GPU (its processes summed)", "base",
		       "new", "change", "");
	for (size_t g = 0; g < ng; g++) {
		const struct cli_mgpu *a = gp[g].base >= 0 ? &ma->gpus[gp[g].base] : NULL;
		const struct cli_mgpu *b = gp[g].new >= 0 ? &mb->gpus[gp[g].new] : NULL;
		char x[32] = "-", y[32] = "-", ch[40] = "", p[32] = "";
		if (a)
			cli_bytes(x, a->peak_bytes, o->exact);
		if (b)
			cli_bytes(y, b->peak_bytes, o->exact);
		if (a && b) {
			cli_signed_bytes(ch, cli_change(a->peak_bytes, b->peak_bytes), o->exact);
			pct_text(p, a->peak_bytes, b->peak_bytes);
		}
		printf("%-40s %16s %16s %14s %9s\n", (a ? a : b)->key, x, y, ch, p);
	}
	free(gp);
	for (size_t i = 0; i < np; i++) {
		const struct cli_mproc *a = side_proc(ma, pp[i].base), *b = side_proc(mb, pp[i].new);
		if (!a || !b)
			continue;
		pair_name(who, sizeof(who), a, b);
		for (size_t d = 0; d < a->n_devs; d++)
			if (print_updates(who, a, b, &a->devs[d], cli_mproc_dev(b, a->devs[d].device),
					  o) < 0)
				return -1;
	}
	return print_sites(ma, mb, pp, np, o);
}

/* The site changes of every process pair, their process beside each. */
struct job_change {
	struct cli_site_change c;
	size_t pair;
};

static int job_change_cmp(const void *x, const void *y)
{
	const struct job_change *p = x, *q = y;
	double a = fabs(cli_change(p->c.base, p->c.new)), b = fabs(cli_change(q->c.base, q->c.new));
	if (a != b)
		return a > b ? -1 : 1;
	if (p->pair != q->pair)
		return p->pair < q->pair ? -1 : 1;
	return strcmp(p->c.name, q->c.name);
}

static int all_changes(const struct cli_measure *ma, const struct cli_measure *mb,
		       const struct cli_pair *pp, size_t np, struct job_change **out, size_t *n)
{
	struct job_change *all = NULL;
	size_t k = 0, cap = 0;
	for (size_t i = 0; i < np; i++) {
		const struct cli_mproc *a = side_proc(ma, pp[i].base), *b = side_proc(mb, pp[i].new);
		struct cli_site_change *c;
		size_t nc;
		if ((!a && !b) || cli_site_changes(a, b, NULL, &c, &nc) < 0) {
			if (!a && !b)
				continue;
			free(all);
			return -1;
		}
		if (k + nc > cap) {
			cap = (k + nc) * 2;
			struct job_change *g = realloc(all, cap * sizeof(*g));
			if (!g) {
				free(c);
				free(all);
				return -1;
			}
			all = g;
		}
		for (size_t j = 0; j < nc; j++)
			all[k++] = (struct job_change){c[j], i};
		free(c);
	}
	if (k)
		qsort(all, k, sizeof(*all), job_change_cmp);
	*out = all;
	*n = k;
	return 0;
}

static int print_sites(const struct cli_measure *ma, const struct cli_measure *mb,
		       const struct cli_pair *pp, size_t np, const struct diff_args *o)
{
	struct job_change *all;
	size_t n;
	if (all_changes(ma, mb, pp, np, &all, &n) < 0)
		return -1;
	size_t shown = o->n && o->n < n ? o->n : n;
	printf("\nsites by bytes at the peak, the largest changes first (%zu of %zu changed):\n",
	       shown, n);
	if (shown)
		printf("%-10s %-10s %16s %16s %14s %9s  %s\n", "process", "device", "base", "new",
		       "change", "", "site");
	for (size_t i = 0; i < shown; i++) {
		const struct job_change *j = &all[i];
		char who[112], x[32], y[32], c[40], p[32];
		pair_name(who, sizeof(who), side_proc(ma, pp[j->pair].base),
			  side_proc(mb, pp[j->pair].new));
		printf("%-10s %-10s %16s %16s %14s %9s  %s\n", who, j->c.device,
		       cli_bytes(x, j->c.base, o->exact), cli_bytes(y, j->c.new, o->exact),
		       cli_signed_bytes(c, cli_change(j->c.base, j->c.new), o->exact),
		       pct_text(p, j->c.base, j->c.new), j->c.name);
	}
	free(all);
	return 0;
}

/* ---- JSON ---- */

/* key: {base, new, change, percent}, a side without it null. */
static void jw_change(struct cli_jw *w, const char *key, bool ha, uint64_t a, bool hb, uint64_t b)
{
	cli_jw_key(w, key);
	cli_jw_begin_object(w);
	cli_jw_key(w, "base");
	cli_jw_u64_or_null(w, ha, a);
	cli_jw_key(w, "new");
	cli_jw_u64_or_null(w, hb, b);
	cli_jw_key(w, "change");
	if (ha && hb)
		cli_jw_i64(w, (int64_t)b - (int64_t)a);
	else
		cli_jw_null(w);
	cli_jw_key(w, "percent");
	if (ha && hb && a)
		cli_jw_double(w, cli_change_pct(a, b));
	else
		cli_jw_null(w);
	cli_jw_end_object(w);
}

static void jw_proc(struct cli_jw *w, const char *key, const struct cli_mproc *p)
{
	cli_jw_key(w, key);
	if (!p) {
		cli_jw_null(w);
		return;
	}
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "path", p->path);
	cli_jw_key(w, "pid");
	cli_jw_u64_or_null(w, p->pid >= 0, (uint64_t)p->pid);
	cli_jw_key(w, "rank");
	cli_jw_u64_or_null(w, p->rank >= 0, (uint64_t)p->rank);
	cli_jw_end_object(w);
}

static void jw_moment(struct cli_jw *w, const char *key, const struct cli_mdev *d)
{
	cli_jw_key(w, key);
	if (!d) {
		cli_jw_null(w);
		return;
	}
	cli_jw_begin_object(w);
	cli_jw_key_u64(w, "peak_ns", d->peak_ns);
	cli_json_moment(w, "peak_", &d->when);
	cli_jw_end_object(w);
}

static int jw_updates(struct cli_jw *w, const struct cli_mproc *pa, const struct cli_mproc *pb,
		      const struct cli_mdev *a, const struct cli_mdev *b)
{
	struct cli_pair *rp;
	size_t nr = 0;
	cli_jw_key(w, "updates");
	cli_jw_begin_array(w);
	if (a && b && a->figures && b->figures) {
		if (cli_pair_rows(pa, pb, &rp, &nr) < 0)
			return -1;
		for (size_t i = 0; i < nr; i++) {
			const struct cgtrace_step_row *r = &pa->rows[rp[i].base];
			const struct cgtrace_step_figures *x = &a->figures[rp[i].base];
			const struct cgtrace_step_figures *y = &b->figures[rp[i].new];
			cli_jw_begin_object(w);
			cli_jw_key_u64(w, "update", r->update);
			if (r->is_phase)
				cli_jw_key_str(w, "phase", r->phase ? r->phase : "-");
			jw_change(w, "peak_bytes", true, x->peak_bytes, true, y->peak_bytes);
			jw_change(w, "end_bytes", true, x->end_bytes, true, y->end_bytes);
			jw_change(w, "allocs", true, x->allocs, true, y->allocs);
			cli_jw_end_object(w);
		}
		free(rp);
	}
	cli_jw_end_array(w);
	return 0;
}

static void jw_growth(struct cli_jw *w, const struct cli_mdev *a, const struct cli_mdev *b)
{
	bool ga = a && a->trend.fitted >= 2, gb = b && b->trend.fitted >= 2;
	cli_jw_key(w, "bytes_per_update");
	cli_jw_begin_object(w);
	cli_jw_key(w, "base");
	cli_jw_double(w, ga ? a->trend.bytes_per_update : NAN);
	cli_jw_key(w, "new");
	cli_jw_double(w, gb ? b->trend.bytes_per_update : NAN);
	cli_jw_key(w, "change");
	cli_jw_double(w, ga && gb ? b->trend.bytes_per_update - a->trend.bytes_per_update : NAN);
	cli_jw_end_object(w);
}

static int jw_device(struct cli_jw *w, const struct cli_mproc *pa, const struct cli_mproc *pb,
		     const struct cli_mdev *a, const struct cli_mdev *b)
{
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "device", a ? a->device : b->device);
	jw_change(w, "peak_bytes", a, a ? a->peak_bytes : 0, b, b ? b->peak_bytes : 0);
	jw_moment(w, "base_when", a);
	jw_moment(w, "new_when", b);
	cli_jw_key(w, "categories");
	cli_jw_begin_object(w);
	for (int k = 0; k < CGTRACE_CAT_COUNT; k++) {
		bool ha = a && a->has_categories, hb = b && b->has_categories;
		jw_change(w, cgtrace_category_name((enum cgtrace_category)k), ha,
			  ha ? a->categories[k] : 0, hb, hb ? b->categories[k] : 0);
	}
	cli_jw_end_object(w);
	jw_change(w, "leaked_bytes", a, a ? a->leaked_bytes : 0, b, b ? b->leaked_bytes : 0);
	jw_change(w, "alloc_count", a, a ? a->alloc_count : 0, b, b ? b->alloc_count : 0);
	jw_change(w, "free_count", a, a ? a->free_count : 0, b, b ? b->free_count : 0);
	jw_growth(w, a, b);
	int r = jw_updates(w, pa, pb, a, b);
	cli_jw_end_object(w);
	return r;
}

static int print_json(const struct cli_measure *ma, const struct cli_measure *mb,
		      const struct cli_pair *pp, size_t np, char **argv)
{
	struct cli_buf buf = {0};
	struct cli_jw w;
	int r = 0;
	cli_jw_init(&w, &buf);
	cli_jw_begin_object(&w);
	const struct cli_measure *sides[] = {ma, mb};
	for (int s = 0; s < 2; s++) {
		cli_jw_key(&w, s ? "new" : "base");
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "path", argv[s]);
		cli_jw_key_bool(&w, "job", sides[s]->job);
		cli_jw_key_u64(&w, "processes", sides[s]->n_procs);
		cli_jw_key_u64(&w, "unreadable", sides[s]->n_unread);
		cli_jw_end_object(&w);
	}
	cli_jw_key(&w, "processes");
	cli_jw_begin_array(&w);
	for (size_t i = 0; r == 0 && i < np; i++) {
		const struct cli_mproc *a = side_proc(ma, pp[i].base), *b = side_proc(mb, pp[i].new);
		struct cli_pair *dp;
		size_t nd;
		if (!a && !b)
			continue;
		if (cli_pair_devs(a, b, &dp, &nd) < 0) {
			r = -1;
			break;
		}
		cli_jw_begin_object(&w);
		jw_proc(&w, "base", a);
		jw_proc(&w, "new", b);
		cli_jw_key(&w, "devices");
		cli_jw_begin_array(&w);
		for (size_t d = 0; r == 0 && d < nd; d++)
			r = jw_device(&w, a, b, dp[d].base >= 0 ? &a->devs[dp[d].base] : NULL,
				      dp[d].new >= 0 ? &b->devs[dp[d].new] : NULL);
		cli_jw_end_array(&w);
		cli_jw_end_object(&w);
		free(dp);
	}
	cli_jw_end_array(&w);
	struct cli_pair *gp;
	size_t ng;
	if (r == 0 && cli_pair_gpus(ma, mb, &gp, &ng) == 0) {
		cli_jw_key(&w, "gpus");
		cli_jw_begin_array(&w);
		for (size_t g = 0; g < ng; g++) {
			const struct cli_mgpu *a = gp[g].base >= 0 ? &ma->gpus[gp[g].base] : NULL;
			const struct cli_mgpu *b = gp[g].new >= 0 ? &mb->gpus[gp[g].new] : NULL;
			cli_jw_begin_object(&w);
			cli_jw_key_str(&w, "gpu", (a ? a : b)->key);
			jw_change(&w, "peak_bytes", a, a ? a->peak_bytes : 0, b, b ? b->peak_bytes : 0);
			cli_jw_end_object(&w);
		}
		cli_jw_end_array(&w);
		free(gp);
	} else {
		r = -1;
	}
	struct job_change *all;
	size_t n;
	if (r == 0 && all_changes(ma, mb, pp, np, &all, &n) == 0) {
		cli_jw_key(&w, "sites");
		cli_jw_begin_array(&w);
		for (size_t i = 0; i < n; i++) {
			char who[112];
			cli_jw_begin_object(&w);
			cli_jw_key_str(&w, "process",
				       pair_name(who, sizeof(who), side_proc(ma, pp[all[i].pair].base),
						 side_proc(mb, pp[all[i].pair].new)));
			cli_jw_key_str(&w, "device", all[i].c.device);
			cli_jw_key_str(&w, "site", all[i].c.name);
			jw_change(&w, "peak_bytes", true, all[i].c.base, true, all[i].c.new);
			cli_jw_end_object(&w);
		}
		cli_jw_end_array(&w);
		free(all);
	} else {
		r = -1;
	}
	cli_jw_end_object(&w);
	if (r < 0) {
		free(buf.p);
		fprintf(stderr, "cgtrace diff: out of memory\n");
		return CLI_FAIL;
	}
	return cli_jw_print(&w);
}

/* ---- reading both sides at once ---- */

struct side_read {
	struct cli_measure m;
	const char *arg;
	struct cli_measure_opts o;
	int status;
};

static void *read_side(void *arg)
{
	struct side_read *s = arg;
	s->status = cli_measure_read(&s->m, &s->arg, 1, &s->o);
	return NULL;
}

static int run(int argc, char **argv)
{
	struct diff_args a = {.n = 10, .updates = 20, .warmup = 1, .fold = 65536};
	int status;
	if (!cli_parse(&cli_diff, argc, argv, &a, &status))
		return status;
	if (argc - optind != 2)
		return cli_usage_error(&cli_diff, "expected BASE and NEW, got %d argument%s",
				       argc - optind, argc - optind == 1 ? "" : "s");
	cli_site_mode = a.site;
	const struct cli_measure_opts mo = {.jobs = a.jobs ? a.jobs : 1,
					    .warmup = a.warmup,
					    .by_function = a.by == DIFF_BY_FUNCTION};
	struct side_read s[2] = {{.arg = argv[optind], .o = mo}, {.arg = argv[optind + 1], .o = mo}};
	/* The two sides on two threads: diff takes about as long as the larger one's read. */
	pthread_t t;
	bool threaded = pthread_create(&t, NULL, read_side, &s[0]) == 0;
	if (!threaded)
		read_side(&s[0]);
	read_side(&s[1]);
	if (threaded)
		pthread_join(t, NULL);
	status = CLI_OK;
	/* A side with no trace read has nothing to compare: its errors are printed. */
	if (s[0].status < 0 || s[1].status < 0 || s[0].m.n_unread == s[0].m.n_procs ||
	    s[1].m.n_unread == s[1].m.n_procs) {
		status = CLI_FAIL;
	} else {
		struct cli_pair *pp;
		size_t np;
		if (cli_pair_procs(&s[0].m, &s[1].m, &pp, &np) < 0) {
			fprintf(stderr, "cgtrace diff: out of memory\n");
			status = CLI_FAIL;
		} else {
			if (a.json) {
				status = print_json(&s[0].m, &s[1].m, pp, np, argv + optind);
			} else if (print_human(&s[0].m, &s[1].m, pp, np, argv + optind, &a) < 0) {
				fprintf(stderr, "cgtrace diff: out of memory\n");
				status = CLI_FAIL;
			}
			free(pp);
		}
		if (s[0].status != CLI_OK || s[1].status != CLI_OK)
			status = CLI_FAIL;
	}
	cli_measure_free(&s[0].m);
	cli_measure_free(&s[1].m);
	if (status == CLI_OK && !a.json && (fflush(stdout) || ferror(stdout)))
		return CLI_FAIL;
	return status;
}

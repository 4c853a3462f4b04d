/* SPDX-License-Identifier: MIT */
/*
 * Limits held against measures (check-eval.h). What each kind measures
 * is docs/compare.md's table: a peak is bytes live at once of the
 * recorded allocations (the probe's own memory is never recorded), per
 * process and device, or summed over a physical GPU's processes.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check-eval.h"
#include "compare.h"

/* What a result is being built from: the limit, the line's parts. */
struct eval {
	struct cli_check *out;
	const struct cli_limit *l;
	bool exact;
	size_t matched; /* results of this limit */
};

static struct cli_check_result *add(struct eval *e, const char *subject)
{
	struct cli_check *c = e->out;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		struct cli_check_result *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		c->v = v;
		c->cap = cap;
	}
	struct cli_check_result *r = &c->v[c->n++];
	*r = (struct cli_check_result){.limit = e->l};
	snprintf(r->subject, sizeof(r->subject), "%s", subject);
	e->matched++;
	return r;
}

/* The result: held with its value, or broken with the line naming the top site. */
static int judge(struct eval *e, const char *subject, bool broken, const char *value,
                 const char *limit, const char *site, const char *site_value)
{
	struct cli_check_result *r = add(e, subject);
	if (!r)
		return -ENOMEM;
	r->state = broken ? CLI_CHECK_BROKEN : CLI_CHECK_HELD;
	e->out->broken += broken;
	if (!broken) {
		snprintf(r->line, sizeof(r->line), "%s: %s: %s, within %s", e->l->text, subject,
		         value, limit);
		return 0;
	}
	char top[700] = "";
	if (site)
		snprintf(top, sizeof(top), "; top site: %s, %s", site, site_value);
	snprintf(r->line, sizeof(r->line), "%s: %s: %s over the limit %s%s (%s)", e->l->text,
	         subject, value, limit, top, e->l->origin);
	return 0;
}

static int unmeasured(struct eval *e, const char *subject, const char *why)
{
	struct cli_check_result *r = add(e, subject);
	if (!r)
		return -ENOMEM;
	r->state = CLI_CHECK_UNMEASURED;
	e->out->unmeasured++;
	snprintf(r->line, sizeof(r->line), "%s: %s: not measured: %s (%s)", e->l->text, subject,
	         why, e->l->origin);
	return 0;
}

static bool device_matches(const struct cli_limit *l, const char *device)
{
	return !l->device[0] || fnmatch(l->device, device, 0) == 0;
}

static bool rank_matches(const struct cli_limit *l, const struct cli_mproc *p)
{
	return p->read && (l->rank < 0 || l->rank == p->rank);
}

static const char *subject_of(char *buf, size_t len, const struct cli_mproc *p, const char *dev)
{
	snprintf(buf, len, "%s%s%s", p->who, dev ? ", " : "", dev ? dev : "");
	return buf;
}

/* A size over a size limit: the value and the limit in words. */
static int judge_bytes(struct eval *e, const char *subject, uint64_t v, const struct cli_msite *s,
                       uint64_t site_v)
{
	char a[32], b[32], c[32];
	cli_bytes(a, v, e->exact);
	cli_bytes(b, e->l->value, e->exact);
	if (s)
		cli_bytes(c, site_v, e->exact);
	return judge(e, subject, v > e->l->value, a, b, s ? s->name : NULL, c);
}

/* ---- max-peak ---- */

/*
 * A device's peak as the limit asks: the whole run's; in one phase, the
 * highest of that phase's rows; of one category, the most of it at each
 * update's peak (phase's with phase=) and at the run's peak. False: the
 * trace has nothing to tell it by.
 */
static bool peak_of(const struct cli_limit *l, const struct cli_mproc *p, const struct cli_mdev *d,
                    uint64_t *v)
{
	bool any = false;
	*v = 0;
	if (l->category < 0 && !l->phase[0]) {
		*v = d->peak_bytes;
		return true;
	}
	for (size_t r = 0; d->figures && r < p->n_rows; r++) {
		const struct cgtrace_step_row *w = &p->rows[r];
		if (l->phase[0] ? !w->is_phase || !w->phase || strcmp(w->phase, l->phase) != 0
		                : w->is_phase)
			continue;
		uint64_t x = l->category < 0 ? d->figures[r].peak_bytes
		                             : d->figures[r].peak_by_category[l->category];
		*v = x > *v ? x : *v;
		any = true;
	}
	if (!l->phase[0] && d->has_categories) {
		uint64_t x = d->categories[l->category];
		*v = x > *v ? x : *v;
		any = true;
	}
	return any;
}

static int eval_peak_gpus(struct eval *e, const struct cli_measure *m)
{
	for (size_t g = 0; g < m->n_gpus; g++) {
		const struct cli_mgpu *x = &m->gpus[g];
		if (fnmatch(e->l->device, x->key, 0) != 0)
			continue;
		if (e->l->category >= 0 || e->l->phase[0]) {
			if (unmeasured(e, x->key,
			               "a physical GPU's sum has no categories or phases") < 0)
				return -ENOMEM;
			continue;
		}
		const struct cli_msite *s = NULL;
		char site[700] = "";
		if (x->top_process >= 0) {
			const struct cli_mproc *p = &m->procs[x->top_process];
			s = cli_mproc_top_site(p, x->top_device,
			                       offsetof(struct cli_msite, peak_bytes));
			if (s)
				snprintf(site, sizeof(site), "%s (%s)", s->name, p->name);
		}
		char a[32], b[32], c[32];
		cli_bytes(a, x->peak_bytes, e->exact);
		cli_bytes(b, e->l->value, e->exact);
		if (s)
			cli_bytes(c, s->peak_bytes, e->exact);
		if (judge(e, x->key, x->peak_bytes > e->l->value, a, b, s ? site : NULL, c) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int eval_peak(struct eval *e, const struct cli_measure *m)
{
	if (!strncmp(e->l->device, "gpu:", 4))
		return eval_peak_gpus(e, m);
	char subject[192];
	for (size_t i = 0; i < m->n_procs; i++) {
		const struct cli_mproc *p = &m->procs[i];
		for (size_t d = 0; rank_matches(e->l, p) && d < p->n_devs; d++) {
			const struct cli_mdev *v = &p->devs[d];
			uint64_t peak;
			if (!device_matches(e->l, v->device))
				continue;
			subject_of(subject, sizeof(subject), p, v->device);
			int r;
			if (!peak_of(e->l, p, v, &peak)) {
				r = unmeasured(e, subject,
				               e->l->phase[0] ? "no update has that phase"
				                              : "no bytes by category at its peak "
				                                "or in an update");
			} else {
				const struct cli_msite *s = cli_mproc_top_site(
				    p, v->device, offsetof(struct cli_msite, peak_bytes));
				r = judge_bytes(e, subject, peak, s, s ? s->peak_bytes : 0);
			}
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* ---- max-leaked, max-allocs: a process's sum, or each device's ---- */

static int eval_sum(struct eval *e, const struct cli_measure *m)
{
	bool leaked = e->l->kind == CLI_LIMIT_LEAKED;
	size_t off =
	    leaked ? offsetof(struct cli_msite, leaked_bytes) : offsetof(struct cli_msite, count);
	char subject[192], a[32], b[32], c[32];
	for (size_t i = 0; i < m->n_procs; i++) {
		const struct cli_mproc *p = &m->procs[i];
		if (!rank_matches(e->l, p))
			continue;
		for (size_t d = 0; d <= p->n_devs; d++) {
			/* d == n_devs: the process's sum, when no device is named. */
			bool all = d == p->n_devs;
			if (all != !e->l->device[0] ||
			    (!all && !device_matches(e->l, p->devs[d].device)))
				continue;
			const char *dev = all ? NULL : p->devs[d].device;
			uint64_t v =
			    all ? (leaked ? p->leaked_bytes : p->alloc_count)
			        : (leaked ? p->devs[d].leaked_bytes : p->devs[d].alloc_count);
			const struct cli_msite *s = cli_mproc_top_site(p, dev, off);
			uint64_t sv = 0;
			if (s)
				memcpy(&sv, (const char *)s + off, sizeof(sv));
			subject_of(subject, sizeof(subject), p, dev);
			int r;
			if (leaked) {
				r = judge_bytes(e, subject, v, s, sv);
			} else {
				char site_v[48];
				snprintf(site_v, sizeof(site_v), "%s allocations",
				         cli_count(c, sv));
				r = judge(e, subject, v > e->l->value, cli_count(a, v),
				          cli_count(b, e->l->value), s ? s->name : NULL, site_v);
			}
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* ---- max-growth-per-update ---- */

static int eval_growth(struct eval *e, const struct cli_measure *m)
{
	char subject[192], a[56], b[40], c[56], why[128];
	for (size_t i = 0; i < m->n_procs; i++) {
		const struct cli_mproc *p = &m->procs[i];
		for (size_t d = 0; rank_matches(e->l, p) && d < p->n_devs; d++) {
			const struct cli_mdev *v = &p->devs[d];
			if (!device_matches(e->l, v->device))
				continue;
			subject_of(subject, sizeof(subject), p, v->device);
			int r;
			if (v->trend.fitted < 2) {
				snprintf(
				    why, sizeof(why),
				    "too few updates to fit (%llu ended after warm-up, 2 needed)",
				    (unsigned long long)v->trend.fitted);
				r = unmeasured(e, subject, why);
			} else {
				double x = v->trend.bytes_per_update;
				cli_signed_bytes(a, x, e->exact);
				strcat(a, " per update");
				cli_bytes(b, e->l->value, e->exact);
				strcat(b, " per update");
				if (v->growth_site) {
					cli_signed_bytes(c, (double)v->growth_per_update, e->exact);
					strcat(c, " per update");
				}
				r = judge(e, subject, x > (double)e->l->value, a, b, v->growth_site,
				          c);
			}
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* ---- max-increase, against the baseline ---- */

/* Broken: new above base by more than pct percent (anything above 0 bytes of none). */
static int judge_increase(struct eval *e, const char *subject, uint64_t base, uint64_t new,
                          const char *site, const char *site_value)
{
	char a[160], b[32], x[32], y[32];
	double p = cli_change_pct(base, new);
	bool broken = base ? p > e->l->pct : new > 0;
	if (base)
		snprintf(a, sizeof(a), "%+.1f%% (%s to %s)", p, cli_bytes(x, base, e->exact),
		         cli_bytes(y, new, e->exact));
	else
		snprintf(a, sizeof(a), "%s where the baseline had none",
		         cli_bytes(y, new, e->exact));
	snprintf(b, sizeof(b), "+%g%%", e->l->pct);
	return judge(e, subject, broken, a, b, site, site_value);
}

static int eval_increase(struct eval *e, const struct cli_measure *m,
                         const struct cli_measure *base)
{
	struct cli_pair *pp, *dp;
	size_t np, nd;
	char subject[192], c[40];
	if (cli_pair_procs(base, m, &pp, &np) < 0)
		return -ENOMEM;
	int r = 0;
	for (size_t i = 0; r == 0 && i < np; i++) {
		if (pp[i].base < 0 || pp[i].new < 0)
			continue;
		const struct cli_mproc *a = &base->procs[pp[i].base], *b = &m->procs[pp[i].new];
		if (!a->read || !rank_matches(e->l, b))
			continue;
		if (cli_pair_devs(a, b, &dp, &nd) < 0) {
			r = -ENOMEM;
			break;
		}
		for (size_t d = 0; r == 0 && d < nd; d++) {
			if (dp[d].base < 0 || dp[d].new < 0)
				continue;
			const struct cli_mdev *x = &a->devs[dp[d].base], *y = &b->devs[dp[d].new];
			if (!device_matches(e->l, y->device))
				continue;
			struct cli_site_change *sc;
			size_t ns;
			if (cli_site_changes(a, b, y->device, &sc, &ns) < 0) {
				r = -ENOMEM;
				break;
			}
			/* The site that rose most: the first of the changes that is a rise. */
			const struct cli_site_change *up = NULL;
			for (size_t k = 0; k < ns && !up; k++)
				up = sc[k].new > sc[k].base ? &sc[k] : NULL;
			if (up)
				cli_signed_bytes(c, cli_change(up->base, up->new), e->exact);
			r = judge_increase(e, subject_of(subject, sizeof(subject), b, y->device),
			                   x->peak_bytes, y->peak_bytes, up ? up->name : NULL, c);
			free(sc);
		}
		free(dp);
	}
	free(pp);
	if (r < 0 || e->l->rank >= 0)
		return r;
	if (cli_pair_gpus(base, m, &pp, &np) < 0)
		return -ENOMEM;
	for (size_t g = 0; r == 0 && g < np; g++) {
		if (pp[g].base < 0 || pp[g].new < 0)
			continue;
		const struct cli_mgpu *x = &base->gpus[pp[g].base], *y = &m->gpus[pp[g].new];
		if (e->l->device[0] && fnmatch(e->l->device, y->key, 0) != 0)
			continue;
		r = judge_increase(e, y->key, x->peak_bytes, y->peak_bytes, NULL, NULL);
	}
	free(pp);
	return r;
}

int cli_check_eval(const struct cli_limits *ls, const struct cli_measure *m,
                   const struct cli_measure *base, bool exact, struct cli_check *out)
{
	*out = (struct cli_check){0};
	for (size_t i = 0; i < m->n_procs; i++) {
		if (m->procs[i].read)
			continue;
		struct eval e = {out, NULL, exact, 0};
		struct cli_check_result *r = add(&e, m->procs[i].path);
		if (!r)
			return -ENOMEM;
		r->state = CLI_CHECK_UNREADABLE;
		snprintf(r->line, sizeof(r->line), "%s: could not be read", m->procs[i].path);
		out->unreadable++;
	}
	for (size_t i = 0; i < ls->n; i++) {
		struct eval e = {out, &ls->v[i], exact, 0};
		int r = 0;
		switch (e.l->kind) {
		case CLI_LIMIT_PEAK:
			r = eval_peak(&e, m);
			break;
		case CLI_LIMIT_LEAKED:
		case CLI_LIMIT_ALLOCS:
			r = eval_sum(&e, m);
			break;
		case CLI_LIMIT_GROWTH:
			r = eval_growth(&e, m);
			break;
		case CLI_LIMIT_INCREASE:
			r = base ? eval_increase(&e, m, base) : 0;
			break;
		case CLI_LIMIT_KINDS:
			break;
		}
		if (r == 0 && !e.matched)
			r = unmeasured(&e, "(none)", "no process or device it names");
		if (r < 0)
			return r;
	}
	return 0;
}

void cli_check_free(struct cli_check *c)
{
	free(c->v);
	*c = (struct cli_check){0};
}

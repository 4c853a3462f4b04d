/* SPDX-License-Identifier: MIT */
/*
 * The process a trace recorded (cgtrace_doc_process): its identity from
 * the meta tags the probe writes, its rank from the launchers' variables
 * or a later cgprobe_rank span, and where its time 0 lies on the
 * machine's clocks (docs/jobs.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "export.h"

/*
 * The variables that say a rank, in the order they are believed: the
 * launchers set one of each row, and torchrun's beside Slurm's or MPI's
 * is the one the program itself reads.
 */
static const char *const rank_vars[] = {"RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
					"SLURM_PROCID"};
static const char *const local_vars[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
					 "SLURM_LOCALID"};
static const char *const world_vars[] = {"WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE",
					 "SLURM_NTASKS"};

static const char *tag(const struct cgtrace_meta *m, const char *key)
{
	/* Sorted by key, and few: a bisection would buy nothing. */
	for (size_t i = 0; i < m->n_tags; i++)
		if (strcmp(m->tags[i].key, key) == 0)
			return m->tags[i].value;
	return NULL;
}

/* A decimal integer of at most 18 digits, the whole value; -1 otherwise. */
static int64_t dec(const char *v)
{
	if (!v || !*v)
		return -1;
	int64_t n = 0;
	for (size_t i = 0; v[i]; i++) {
		if (v[i] < '0' || v[i] > '9' || i >= 18)
			return -1;
		n = n * 10 + (v[i] - '0');
	}
	return n;
}

/* A decimal uint64_t, the whole value (a wall clock in ns has 19 digits). */
static bool dec_u64(const char *v, uint64_t *out)
{
	uint64_t n = 0;
	if (!v || !*v)
		return false;
	for (size_t i = 0; v[i]; i++) {
		unsigned d = (unsigned)(v[i] - '0');
		if (d > 9 || n > (UINT64_MAX - d) / 10)
			return false;
		n = n * 10 + d;
	}
	*out = n;
	return true;
}

/* The first of vars set to a number, and which it was. */
static int64_t first_of(const struct cgtrace_meta *m, const char *const *vars, size_t n,
			const char **which)
{
	for (size_t i = 0; i < n; i++) {
		int64_t v = dec(tag(m, vars[i]));
		if (v >= 0) {
			if (which)
				*which = vars[i];
			return v;
		}
	}
	return -1;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int64_t mo, int64_t d)
{
	y -= mo <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static bool digits(const char *p, int n, int64_t *out)
{
	int64_t v = 0;
	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return true;
}

/*
 * The meta timestamp (RFC 3339: YYYY-MM-DDTHH:MM:SS, a fraction, Z or an
 * offset) in ns since the epoch; 0 when it is not one.
 */
static uint64_t rfc3339_ns(const char *t)
{
	int64_t y, mo, d, h, mi, s;
	if (!t || strlen(t) < 19 || !digits(t, 4, &y) || t[4] != '-' || !digits(t + 5, 2, &mo) ||
	    t[7] != '-' || !digits(t + 8, 2, &d) || (t[10] != 'T' && t[10] != ' ') ||
	    !digits(t + 11, 2, &h) || t[13] != ':' || !digits(t + 14, 2, &mi) || t[16] != ':' ||
	    !digits(t + 17, 2, &s) || mo < 1 || mo > 12 || d < 1 || d > 31)
		return 0;
	const char *p = t + 19;
	int64_t frac = 0, scale = 1000000000;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale > 1) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
	int64_t off = 0, oh, om;
	if ((*p == '+' || *p == '-') && digits(p + 1, 2, &oh) && p[3] == ':' &&
	    digits(p + 4, 2, &om))
		off = (*p == '+' ? 1 : -1) * (oh * 3600 + om * 60);
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off;
	return secs < 0 ? 0 : (uint64_t)secs * 1000000000u + (uint64_t)frac;
}

/* The last span that says the rank, if any. */
static const struct cg_doc_rank *late_rank(const struct cgtrace_doc *d)
{
	return d->ranks.len ? CG_VEC_AT(&d->ranks, struct cg_doc_rank, d->ranks.len - 1) : NULL;
}

CG_EXPORT int cgtrace_doc_process(const struct cgtrace_doc *d, struct cgtrace_process *o)
{
	struct cgtrace_meta m;
	cgtrace_doc_meta(d, &m);
	if (!m.schema)
		return -EINVAL;
	const char *fork = tag(&m, "forked_from");
	*o = (struct cgtrace_process){
		.pid = dec(tag(&m, "pid")),
		.ppid = dec(tag(&m, "ppid")),
		.forked_from = dec(fork),
		.host = tag(&m, "hostname"),
		.executable = tag(&m, "executable"),
		.cmdline = tag(&m, "cmdline"),
		.boot_id = tag(&m, "cgprobe_boot_id"),
	};
	if (!o->host)
		o->host = "";
	if (!o->executable)
		o->executable = "";
	if (!o->cmdline)
		o->cmdline = "";
	if (!o->boot_id)
		o->boot_id = "";

	o->rank = first_of(&m, rank_vars, sizeof(rank_vars) / sizeof(*rank_vars), &o->rank_source);
	o->local_rank = first_of(&m, local_vars, sizeof(local_vars) / sizeof(*local_vars), NULL);
	o->world_size = first_of(&m, world_vars, sizeof(world_vars) / sizeof(*world_vars), NULL);
	const struct cg_doc_rank *late = late_rank(d);
	if (late && late->has_rank && late->rank <= INT64_MAX) {
		o->rank = (int64_t)late->rank;
		o->rank_source = "cgprobe_rank";
	}
	if (late && late->has_world && late->world <= INT64_MAX)
		o->world_size = (int64_t)late->world;

	o->has_clock = dec_u64(tag(&m, "cgprobe_clock_realtime_ns"), &o->realtime_ns) &&
		       dec_u64(tag(&m, "cgprobe_clock_monotonic_ns"), &o->monotonic_ns);
	if (o->has_clock) {
		if (!dec_u64(tag(&m, "cgprobe_clock_error_ns"), &o->clock_error_ns))
			o->clock_error_ns = 0;
	} else {
		o->realtime_ns = rfc3339_ns(m.timestamp);
		o->monotonic_ns = 0;
		/* The timestamp's own resolution: milliseconds, as the probe writes it. */
		o->clock_error_ns = o->realtime_ns ? 1000000 : 0;
	}
	return 0;
}

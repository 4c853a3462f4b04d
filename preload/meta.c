/* SPDX-License-Identifier: MIT */
#include "meta.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgtrace.h"
#include "compact_out.h"
#include "jsonl_format.h"
#include "launch_env.h"
#include "meta_end.h"
#include "options.h"
#include "process.h"
#include "record.h"
#include "run_meta.h"

#define MAX_TAGS 96

struct tags {
	struct cg_tagv v[MAX_TAGS];
	uint32_t n;
};

static bool has_key(const struct tags *t, struct cg_sv k)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (cg_sv_eq(t->v[i].key, k))
			return true;
	return false;
}

static void add(struct tags *t, const char *k, size_t kn, const char *v, size_t vn)
{
	struct cg_sv key = {k, (uint32_t)kn};
	if (t->n < MAX_TAGS && !has_key(t, key))
		t->v[t->n++] = (struct cg_tagv){key, {v, (uint32_t)vn}};
}

static void add_c(struct tags *t, const char *k, const char *v)
{
	add(t, k, strlen(k), v, strlen(v));
}

static void add_setting(void *t, const char *k, const char *v)
{
	add_c(t, k, v);
}

/* CGPROBE_TAGS=k=v,k=v: the probe's own keys win, and of repeats the last. */
static void add_user_tags(struct tags *t, uint32_t own)
{
	const char *p = cg_opt.tags;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		if (eq && eq > p) {
			struct cg_sv key = {p, (uint32_t)(eq - p)};
			uint32_t i;
			for (i = own; i < t->n && !cg_sv_eq(t->v[i].key, key); i++)
				;
			if (i < t->n)
				t->v[i].value = (struct cg_sv){eq + 1, (uint32_t)(p + n - eq - 1)};
			else
				add(t, p, (size_t)(eq - p), eq + 1, (size_t)(p + n - eq - 1));
		}
		p += n + (end != NULL);
	}
}

void cg_meta_format(struct cg_buf *b, uint64_t unix_ns, const struct cg_meta_origin *origin)
{
	char pid[24], ppid[24], parent[24], host[256], run_id[64], ts[64], corr[512];
	char clock[3][24];
	struct tags t = {.n = 0};

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(ppid, sizeof(ppid), "%d", (int)getppid());
	if (gethostname(host, sizeof(host)) < 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	add_c(&t, "pid", pid);
	add_c(&t, "ppid", ppid);
	add_c(&t, "executable", cg_process.exe_path);
	add_c(&t, "cmdline", cg_process.cmdline);
	add_c(&t, "hostname", host);
	add_c(&t, "cgprobe_version", CGTRACE_VERSION);
	cg_options_each_tag(add_setting, &t);
	/* Not a setting but the window's outcome, known when the head is written. */
	if (origin->capture_reached)
		add_c(&t, "cgprobe_capture_reached", origin->capture_reached);
	if (cg_opt.trace_format == CG_FORMAT_COMPACT)
		add_c(&t, "cgprobe_zstd_level", CG_PROBE_ZSTD_LEVEL_TEXT);
	if (origin->forked_from) {
		snprintf(parent, sizeof(parent), "%d", (int)origin->forked_from);
		add_c(&t, "forked_from", parent);
	}
	if (origin->inherited)
		add_c(&t, "cgprobe_inherited", origin->inherited);
	cg_meta_end_tags(add_setting, &t);
	if (origin->clock) {
		const struct cg_wallclock *w = origin->clock;
		snprintf(clock[0], sizeof(clock[0]), "%llu", (unsigned long long)w->realtime_ns);
		snprintf(clock[1], sizeof(clock[1]), "%llu", (unsigned long long)w->monotonic_ns);
		snprintf(clock[2], sizeof(clock[2]), "%llu", (unsigned long long)w->error_ns);
		add_c(&t, "cgprobe_clock_realtime_ns", clock[0]);
		add_c(&t, "cgprobe_clock_monotonic_ns", clock[1]);
		add_c(&t, "cgprobe_clock_error_ns", clock[2]);
		if (w->boot_id[0])
			add_c(&t, "cgprobe_boot_id", w->boot_id);
	}
	cg_launch_env_each(add_setting, &t);
	add_user_tags(&t, t.n);

	const char *entry = cg_opt.entrypoint ? cg_opt.entrypoint : cg_process.exe_name;
	if (cg_opt.correlation_id)
		snprintf(corr, sizeof(corr), "%s", cg_opt.correlation_id);
	else
		snprintf(corr, sizeof(corr), "%s/update-%llu", entry,
			 (unsigned long long)cg_opt.capture_step);
	struct cg_rec r = {.kind = CGTRACE_KIND_META};
	r.u.meta = (struct cg_rec_meta){
		.schema = CG_SV_LIT(CGTRACE_SCHEMA),
		.run_id = {run_id, (uint32_t)cg_run_id(run_id, unix_ns)},
		.correlation_id = cg_sv_c(corr),
		.entrypoint = cg_sv_c(entry),
		.timestamp = {ts, (uint32_t)cg_iso8601_utc(ts, unix_ns)},
		.device = cg_sv_c(cg_opt.device),
		.phase = cg_opt.phase,
		.timing_mode = CGTRACE_TIMING_HOST,
		.capture_step = cg_opt.capture_step,
		.warmup_steps = cg_opt.capture_step - 1,
		.tags = t.v,
		.n_tags = t.n,
	};
	cg_jsonl_format(b, &r);
	r.kind = CGTRACE_KIND_SPAN_START;
	r.u.span_start = (struct cg_rec_span_start){
		.id = CG_SV_LIT("s1"),
		.name = cg_sv_c(entry),
		.start_ns = 0,
		.span_kind = CGTRACE_SPAN_FUNCTION,
	};
	cg_jsonl_format(b, &r);
}

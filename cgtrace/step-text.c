/* SPDX-License-Identifier: MIT */
/* The words of memory per training update (step-text.h). */
#include "step-text.h"

const char *cli_updates_from_name(enum cgtrace_updates_from from)
{
	switch (from) {
	case CGTRACE_UPDATES_MARKED:
		return "marked";
	case CGTRACE_UPDATES_INFERRED:
		return "inferred";
	default:
		return "none";
	}
}

const char *cli_updates_from_words(enum cgtrace_updates_from from)
{
	switch (from) {
	case CGTRACE_UPDATES_MARKED:
		return "marked in the trace";
	case CGTRACE_UPDATES_INFERRED:
		return "inferred: each from one forward step to the next (the trace marks none)";
	default:
		return "the trace marks none (cgprobe_update) and has no forward steps";
	}
}

const char *cli_step_trend(char *buf, size_t len, const struct cgtrace_steps *st, size_t d,
                           bool exact)
{
	const struct cgtrace_step_trend *t = &st->trends[d];
	char b[40], w[64];
	snprintf(w, sizeof(w), "after %llu warm-up update%s", (unsigned long long)st->warmup,
	         st->warmup == 1 ? "" : "s");
	if (t->fitted < 2)
		snprintf(buf, len,
		         "trend on %s %s: too few updates to fit (%llu ended after warm-up, 2 "
		         "needed)",
		         st->devices[d], w, (unsigned long long)t->fitted);
	else if (t->steady)
		snprintf(buf, len, "trend on %s %s: steady (%s per update over %llu updates)",
		         st->devices[d], w, cli_signed_bytes(b, t->bytes_per_update, exact),
		         (unsigned long long)t->fitted);
	else
		snprintf(buf, len,
		         "trend on %s %s: %s per update over %llu updates (live bytes at update "
		         "ends, least squares)",
		         st->devices[d], w, cli_signed_bytes(b, t->bytes_per_update, exact),
		         (unsigned long long)t->fitted);
	return buf;
}

void cli_json_step_figures(struct cli_jw *w, const struct cgtrace_step_figures *f)
{
	cli_jw_key_u64(w, "peak_bytes", f->peak_bytes);
	cli_jw_key_u64(w, "peak_ns", f->peak_ns);
	cli_jw_key_u64(w, "start_bytes", f->start_bytes);
	cli_jw_key_u64(w, "end_bytes", f->end_bytes);
	cli_jw_key_u64(w, "allocs", f->allocs);
	cli_jw_key(w, "peak_by_category");
	cli_jw_begin_object(w);
	for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
		cli_jw_key_u64(w, cgtrace_category_name((enum cgtrace_category)c),
			       f->peak_by_category[c]);
	cli_jw_end_object(w);
}

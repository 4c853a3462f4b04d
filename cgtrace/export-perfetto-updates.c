/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto export's training updates: one slice per update on a
 * thread of its own, inferred updates as well as marked ones (which have
 * no span of their own), each carrying what cgtrace steps prints of it.
 */
#include "export-perfetto-updates.h"

#include <errno.h>
#include <stdlib.h>

#include "step-select.h"
#include "step-text.h"

static void figures(struct cli_jw *w, const char *device, const struct cgtrace_step_figures *f)
{
	cli_jw_key(w, device);
	cli_jw_begin_object(w);
	cli_json_step_figures(w, f);
	cli_jw_end_object(w);
}

/*
 * Row r as a slice ending at end: the next kept update's start at the
 * latest, since a thread's slices must nest (updates never overlap).
 */
static void slice(struct perfetto_out *o, const struct cgtrace_steps *st, size_t r, uint64_t pid,
                  uint64_t tid, uint64_t end)
{
	const struct cgtrace_step_row *row = &st->rows[r];
	struct cli_jw *w = &o->w;
	char name[32];
	snprintf(name, sizeof(name), "update %llu", (unsigned long long)row->update);
	perfetto_event(o, 'X', pid, tid, row->start_ns, name);
	perfetto_key_us(w, "dur", end > row->start_ns ? end - row->start_ns : 0);
	cli_jw_key_str(w, "cat", "update");
	perfetto_args_begin(w);
	cli_jw_key_u64(w, "update", row->update);
	cli_jw_key_str(w, "updates_from", cli_updates_from_name(st->from));
	cli_jw_key_bool(w, "warmup", row->warmup);
	cli_jw_key_bool(w, "open", row->open);
	if (end < row->end_ns)
		cli_jw_key_str(w, "clamped", "ends where the next update starts");
	cli_jw_key(w, "devices");
	cli_jw_begin_object(w);
	for (size_t d = 0; d < st->n_devices; d++)
		figures(w, st->devices[d], &st->figures[d][r]);
	cli_jw_end_object(w);
	perfetto_args_end(w);
}

int perfetto_updates(struct perfetto_out *o, const struct cgtrace_view *v, uint64_t pid,
                     uint64_t tid, size_t *kept)
{
	const struct cgtrace_steps *st = v->steps;
	*kept = 0;
	if (!st || !st->updates)
		return 0;
	bool *keep;
	if (cli_step_select(st, CLI_PERFETTO_UPDATES, &keep, kept) < 0)
		return -ENOMEM;
	perfetto_name_event(o, "thread_name", pid, tid, "training updates");
	for (size_t r = 0; r < st->n_rows;) {
		size_t next = r + 1;
		while (next < st->n_rows && !keep[next])
			next++;
		if (keep[r]) {
			uint64_t end = st->rows[r].end_ns;
			if (next < st->n_rows && st->rows[next].start_ns < end)
				end = st->rows[next].start_ns;
			slice(o, st, r, pid, tid, end);
		}
		r = next;
	}
	free(keep);
	return 0;
}

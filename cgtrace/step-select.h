/* SPDX-License-Identifier: MIT */
/*
 * Which training updates a bounded picture lists one by one (the report's
 * table, the Perfetto export's track): every update up to a limit, and
 * beyond it a selection that keeps what a reader looks for first.
 */
#ifndef CGTRACE_STEP_SELECT_H
#define CGTRACE_STEP_SELECT_H

#include "cli.h"

/*
 * keep[r] for each row r of st: true for the update rows kept, never a
 * phase row. All of them when there are at most limit; else exactly
 * limit: the first and the last update; on each device the updates with
 * the highest peak (a quarter of limit in all, shared evenly between the
 * devices, at least one each; the earlier among equals), so each
 * device's peak update among them; then an even sample of the others in
 * time order. *kept: how many; *keep is malloc'ed (n_rows, at least 1),
 * -ENOMEM. limit is at least 2.
 */
int cli_step_select(const struct cgtrace_steps *st, size_t limit, bool **keep, size_t *kept);

#endif

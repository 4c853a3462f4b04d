/* SPDX-License-Identifier: MIT */
/*
 * The words of memory per training update (docs/steps.md), said once:
 * cgtrace steps prints them, the HTML report shows them.
 */
#ifndef CGTRACE_STEP_TEXT_H
#define CGTRACE_STEP_TEXT_H

#include "cli.h"

/* Where the updates come from, as JSON names them: "none", "marked", "inferred". */
const char *cli_updates_from_name(enum cgtrace_updates_from from);
/*
 * The same in words: "marked in the trace", "inferred: each from one
 * forward step to ...", and for none why there are none.
 */
const char *cli_updates_from_words(enum cgtrace_updates_from from);
/*
 * Device d's trend line: "trend on cuda:0 after 1 warm-up update: steady
 * (+12 B per update over 20 updates)", "...: too few updates to fit (1 ended
 * after warm-up, 2 needed)".
 */
const char *cli_step_trend(char *buf, size_t len, const struct cgtrace_steps *st, size_t d,
                           bool exact);

/*
 * A row's figures on one device as members of the object being written,
 * under cgtrace steps --json's names: peak_bytes, peak_ns, start_bytes,
 * end_bytes, allocs, peak_by_category {category: bytes}.
 */
void cli_json_step_figures(struct cli_jw *w, const struct cgtrace_step_figures *f);

#endif

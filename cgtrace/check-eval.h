/* SPDX-License-Identifier: MIT */
/*
 * The limits of cgtrace check held against a side's measures
 * (check-eval.c): one result per limit and process (per device, per
 * physical GPU where the limit is one's), each with its one line.
 */
#ifndef CGTRACE_CHECK_EVAL_H
#define CGTRACE_CHECK_EVAL_H

#include "check-rules.h"
#include "measure.h"

enum cli_check_state {
	CLI_CHECK_HELD,
	CLI_CHECK_BROKEN,
	CLI_CHECK_UNMEASURED, /* nothing to measure it by: too few updates, no such device */
	CLI_CHECK_UNREADABLE, /* a trace that could not be read (limit NULL) */
};

struct cli_check_result {
	const struct cli_limit *limit; /* NULL: an unreadable trace */
	enum cli_check_state state;
	char subject[192]; /* "rank 1 (pid 5120), cpu", "gpu:GPU-...", a trace's path */
	/*
	 * Broken: "LIMIT: SUBJECT: VALUE over the limit LIMIT; top site: SITE,
	 * BYTES (ORIGIN)"; held: the value measured; unmeasured: why.
	 */
	char line[2048];
};

struct cli_check {
	struct cli_check_result *v;
	size_t n, cap;
	size_t broken, unmeasured, unreadable;
};

/*
 * Every limit of ls held against m (base: the baseline's measures, for
 * max-increase; NULL without one): 0, -ENOMEM. Sizes in the lines exact
 * when exact.
 */
int cli_check_eval(const struct cli_limits *ls, const struct cli_measure *m,
                   const struct cli_measure *base, bool exact, struct cli_check *out);
void cli_check_free(struct cli_check *c);

#endif

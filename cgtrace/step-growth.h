/* SPDX-License-Identifier: MIT */
/*
 * cgtrace steps --growth: the library's growth (by update, stack and
 * device) summed by site, the sites that grew in most updates first.
 */
#ifndef CGTRACE_STEP_GROWTH_H
#define CGTRACE_STEP_GROWTH_H

#include "cli.h"

struct step_growth_row {
	const char *device;
	uint64_t stack_id; /* the first stack of the row, for its frames */
	const struct cgtrace_frame *site;
	char *name; /* the site's name, as top prints it */
	uint64_t bytes, count;
	uint64_t updates; /* updates that left some of it */
	uint64_t first, last;
};

/* The rows of device (NULL: all), sorted; *rows malloc'ed, free with step_growth_free. */
int step_growth_rows(struct cli_sites *s, const struct cgtrace_steps *st, const char *device,
		     struct step_growth_row **rows, size_t *n);
void step_growth_free(struct step_growth_row *rows, size_t n);
/* Its bytes per update: over the updates from its first to its last. */
uint64_t step_growth_per_update(const struct step_growth_row *r);

#endif

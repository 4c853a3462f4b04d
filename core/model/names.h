/* SPDX-License-Identifier: MIT */
/*
 * The spellings of the format's enumerations, shared by the formatter, the
 * parsers' schema tables and the public cgtrace_*_name functions so that
 * reading and writing cannot disagree. Each table is indexed by its enum;
 * a NULL entry has no spelling (CGTRACE_STEP_NONE is written by omission).
 */
#ifndef CG_NAMES_H
#define CG_NAMES_H

#include <stddef.h>

#include "cgtrace.h"

#define CG_PHASE_COUNT 2
#define CG_TIMING_COUNT 2
#define CG_SPAN_KIND_COUNT 3
#define CG_STEP_COUNT 4
#define CG_ACTION_COUNT 2
#define CG_GRAD_STATE_COUNT 4

extern const char *const cg_kind_names[CGTRACE_KIND_COUNT];
extern const char *const cg_phase_names[CG_PHASE_COUNT];
extern const char *const cg_timing_names[CG_TIMING_COUNT];
extern const char *const cg_span_kind_names[CG_SPAN_KIND_COUNT];
extern const char *const cg_step_names[CG_STEP_COUNT];
extern const char *const cg_action_names[CG_ACTION_COUNT];
extern const char *const cg_category_names[CGTRACE_CAT_COUNT];
extern const char *const cg_grad_state_names[CG_GRAD_STATE_COUNT];

/* Index of the entry spelled exactly s[0..len) (NULL entries never match), or -1. */
int cg_name_lookup(const char *const *table, size_t n, const char *s, size_t len);

/* table[i], or NULL when i is out of range. */
static inline const char *cg_name_at(const char *const *table, size_t n, unsigned i)
{
	return i < n ? table[i] : NULL;
}

#endif

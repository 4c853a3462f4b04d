/* SPDX-License-Identifier: MIT */
/*
 * The memory a trace marked as model parameters (cgprobe_parameters,
 * docs/steps.md), as the analysis keeps it: ranges merged where they
 * touch, sorted. The rule is the probe's: an allocation lying within a
 * range, or starting where one starts (the block holding the parameters,
 * which may be larger), is parameter.
 */
#ifndef CG_PARAM_RANGES_H
#define CG_PARAM_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cg_param_ranges {
	uint64_t *r; /* [start, end) pairs */
	size_t n, cap;
};

/* Adds n [start, end) pairs; 0 or -ENOMEM. */
int cg_param_ranges_add(struct cg_param_ranges *p, const uint64_t *pairs, size_t n);
bool cg_param_ranges_has(const struct cg_param_ranges *p, uint64_t addr, uint64_t bytes);
void cg_param_ranges_free(struct cg_param_ranges *p);

/* A tensor id's address: "0x" and 1 to 16 hex digits. */
bool cg_param_addr(const char *id, uint64_t *addr);

#endif

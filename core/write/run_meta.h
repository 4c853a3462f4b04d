/* SPDX-License-Identifier: MIT */
/* Run metadata both writers (the session API and the probe) share. */
#ifndef CG_RUN_META_H
#define CG_RUN_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"

/* `2026-08-04T18:00:00.123Z` into buf (64 bytes); returns the length. */
size_t cg_iso8601_utc(char *buf, uint64_t unix_ns);
/* `run-<pid>-<unix_nanos>` into buf (64 bytes); returns the length. */
size_t cg_run_id(char *buf, uint64_t unix_ns);
/* The format's category for a step: forward -> activation, backward -> gradient, ... */
enum cgtrace_category cg_category_for_step(enum cgtrace_step step, bool requires_grad);

#endif

/* SPDX-License-Identifier: MIT */
/* Groups of the allocations live at the peak by op_name (cgtrace_memory_peak_by_op). */
#ifndef CG_OP_GROUPS_H
#define CG_OP_GROUPS_H

#include <stddef.h>

#include "cgtrace.h"

/* Most bytes first, then op_name bytewise (NULL first): the order the public call gives. */
void cg_op_groups_sort(struct cgtrace_op_group *g, size_t n);

#endif

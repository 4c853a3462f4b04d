/* SPDX-License-Identifier: MIT */
/* The order in which the analyses replay memory records. */
#ifndef CG_MEMORY_ORDER_H
#define CG_MEMORY_ORDER_H

#include <stdint.h>

struct cgtrace_doc;

/* Memory records in analysis order: a permutation, NULL when the file order already is. */
int cg_doc_memory_order(const struct cgtrace_doc *d, uint32_t **order);

#endif

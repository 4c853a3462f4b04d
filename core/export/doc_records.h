/* SPDX-License-Identifier: MIT */
/* The document as records, in the format's stream order: what each export writes out. */
#ifndef CG_DOC_RECORDS_H
#define CG_DOC_RECORDS_H

#include "cgtrace.h"
#include "record.h"

/*
 * Calls fn with each record of d in the order cgtrace_doc_export_jsonl
 * writes them (export_jsonl.c), device identities riding on the first
 * record naming their device. The record lives until fn returns; the first
 * error fn returns ends the walk and is returned.
 */
int cg_doc_records(const struct cgtrace_doc *d, int (*fn)(void *user, const struct cg_rec *r),
		   void *user);

#endif

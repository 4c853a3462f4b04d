/* SPDX-License-Identifier: MIT */
/* The streaming reader's internal side: records as the parsers give them, for export. */
#ifndef CG_STREAM_READ_H
#define CG_STREAM_READ_H

#include "cgtrace.h"
#include "record.h"

/*
 * Like cgtrace_reader_next, with the parsed record itself (views into the
 * line, valid until the next call) rather than the public view of it.
 */
int cg_reader_next_rec(struct cgtrace_reader *r, const struct cg_rec **rec);
/* Empties the reader's message (export does so on a write error). */
void cg_reader_clear_message(struct cgtrace_reader *r);

#endif

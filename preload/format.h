/* SPDX-License-Identifier: MIT */
/* Events and session records as candle-graph/trace/6 lines, via the core formatter. */
#ifndef CG_FORMAT_H
#define CG_FORMAT_H

#include <stdint.h>

#include "buf.h"
#include "event.h"

void cg_format_event(struct cg_buf *b, const struct cg_event *e);
void cg_format_root_end(struct cg_buf *b, uint64_t duration_ns);

#endif

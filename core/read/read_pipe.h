/* SPDX-License-Identifier: MIT */
/* The reader's pipeline: one thread splits and fast-parses lines, the caller applies them. */
#ifndef CG_READ_PIPE_H
#define CG_READ_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lines.h"
#include "read_apply.h"

/* Reads all lines through the two-stage pipeline; falls back to one thread. */
int cg_read_pipe(struct cg_read_ctx *ctx, struct cg_lines *lines);

#endif

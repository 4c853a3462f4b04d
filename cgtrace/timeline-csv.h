/* SPDX-License-Identifier: MIT */
/* The columns of timeline --csv, once (timeline-csv.c): one trace's rows and a job's. */
#ifndef CLI_TIMELINE_CSV_H
#define CLI_TIMELINE_CSV_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"

/*
 * The header and its newline: timestamp_ns,device,live_bytes,free_bytes,
 * then each category's bytes, then extra (",pid,rank" of a job; "" none).
 */
void cli_timeline_csv_head(struct cli_buf *b, const char *extra);
/* A row's columns up to the categories', without its newline: a job adds its own after. */
void cli_timeline_csv_row(struct cli_buf *b, uint64_t t, const char *device, uint64_t live,
			  bool has_free, uint64_t free_bytes, const uint64_t *by_category);
/* The buffer written to stdout and emptied; -1 when memory ran out before or the write failed. */
int cli_timeline_csv_flush(struct cli_buf *b);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * timeline --csv's columns: one trace's rows and a job's merged rows are
 * the same columns, a job's with the process's after them, so a reader of
 * the one reads the other.
 */
#include <string.h>

#include "timeline-csv.h"

void cli_timeline_csv_head(struct cli_buf *b, const char *extra)
{
	/* The first four columns were the whole header once: new ones go after them. */
	cli_buf_lit(b, "timestamp_ns,device,live_bytes,free_bytes");
	for (int k = 0; k < CGTRACE_CAT_COUNT; k++) {
		cli_buf_putc(b, ',');
		cli_buf_puts(b, cgtrace_category_name((enum cgtrace_category)k));
		cli_buf_lit(b, "_bytes");
	}
	cli_buf_puts(b, extra);
	cli_buf_putc(b, '\n');
}

void cli_timeline_csv_row(struct cli_buf *b, uint64_t t, const char *device, uint64_t live,
			  bool has_free, uint64_t free_bytes, const uint64_t *by_category)
{
	cli_buf_u64(b, t);
	cli_buf_putc(b, ',');
	/* Device names are plain (cpu, cuda:0); quote only what CSV needs quoted. */
	if (strpbrk(device, ",\"\n\r")) {
		cli_buf_putc(b, '"');
		for (const char *c = device; *c; c++) {
			if (*c == '"')
				cli_buf_putc(b, '"');
			cli_buf_putc(b, *c);
		}
		cli_buf_putc(b, '"');
	} else {
		cli_buf_puts(b, device);
	}
	cli_buf_putc(b, ',');
	cli_buf_u64(b, live);
	cli_buf_putc(b, ',');
	if (has_free)
		cli_buf_u64(b, free_bytes);
	for (int c = 0; c < CGTRACE_CAT_COUNT; c++) {
		cli_buf_putc(b, ',');
		cli_buf_u64(b, by_category[c]);
	}
}

int cli_timeline_csv_flush(struct cli_buf *b)
{
	int ret = b->err || fwrite(b->p, 1, b->len, stdout) != b->len ? -1 : 0;
	b->len = 0;
	return ret;
}

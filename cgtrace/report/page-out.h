/* SPDX-License-Identifier: MIT */
/*
 * The report page written out (page-out.c): the template's bytes before
 * the data block, the data blocks, the bytes after.
 */
#ifndef CGTRACE_REPORT_PAGE_OUT_H
#define CGTRACE_REPORT_PAGE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The page up to the opening of its data block, <script type="application/json" id="cg-data">. */
bool report_page_head(FILE *f);
/* JSON into the data block open, every '<' as \u003c. */
bool report_page_data(FILE *f, const char *p, size_t n);
/* Closes the data block open and opens another, of id (a job's page holds several). */
bool report_page_block(FILE *f, const char *id);
/* The rest of the page: the block open closed, the script. */
bool report_page_tail(FILE *f);

#endif

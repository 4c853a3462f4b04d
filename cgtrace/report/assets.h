/* SPDX-License-Identifier: MIT */
/*
 * The report page, built from report.html, report.css and the scripts by
 * embed.py: the bytes before and after the JSON data block.
 */
#ifndef CGTRACE_REPORT_ASSETS_H
#define CGTRACE_REPORT_ASSETS_H

#include <stddef.h>

extern const unsigned char cg_report_head[];
extern const size_t cg_report_head_len;
extern const unsigned char cg_report_tail[];
extern const size_t cg_report_tail_len;

#endif

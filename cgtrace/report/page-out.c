/* SPDX-License-Identifier: MIT */
/* The report page written out (page-out.h): the template around the data blocks. */
#include "page-out.h"

#include "assets.h"

bool report_page_head(FILE *f)
{
	return fwrite(cg_report_head, 1, cg_report_head_len, f) == cg_report_head_len;
}

/*
 * The data block sits in a <script> element: '<' as \u003c keeps any
 * string (a tag, a tensor id) from ending it or opening a comment there,
 * and is still the same JSON. '<' occurs only inside strings.
 */
bool report_page_data(FILE *f, const char *p, size_t n)
{
	size_t from = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '<')
			continue;
		if (fwrite(p + from, 1, i - from, f) != i - from || fputs("\\u003c", f) < 0)
			return false;
		from = i + 1;
	}
	return fwrite(p + from, 1, n - from, f) == n - from;
}

bool report_page_block(FILE *f, const char *id)
{
	return fprintf(f, "</script>\n<script type=\"application/json\" id=\"%s\">", id) > 0;
}

bool report_page_tail(FILE *f)
{
	return fwrite(cg_report_tail, 1, cg_report_tail_len, f) == cg_report_tail_len;
}

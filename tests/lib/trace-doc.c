/* SPDX-License-Identifier: MIT */
#include "trace-doc.h"

#include <string.h>

bool trace_find_span(const struct cgtrace_doc *doc, const char *id, struct cgtrace_span *out)
{
	size_t n = cgtrace_doc_count(doc, CGTRACE_KIND_SPAN_START);
	for (size_t i = 0; i < n; i++) {
		cgtrace_doc_span(doc, i, out);
		if (!strcmp(out->id, id))
			return true;
	}
	return false;
}

size_t trace_n_memory(const struct cgtrace_doc *doc)
{
	return cgtrace_doc_count(doc, CGTRACE_KIND_MEMORY);
}

struct cgtrace_memory trace_memory(const struct cgtrace_doc *doc, size_t i)
{
	struct cgtrace_memory m;
	cgtrace_doc_memory(doc, i, &m);
	return m;
}

bool trace_is_address(const char *s)
{
	if (strncmp(s, "0x", 2) || !s[2] || s[2] == '0' || strlen(s) > 18)
		return false;
	for (const char *p = s + 2; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

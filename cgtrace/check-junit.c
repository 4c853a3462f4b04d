/* SPDX-License-Identifier: MIT */
/* The JUnit report of cgtrace check (check-junit.h). */
#include "check-junit.h"

/* Text in an attribute or an element: the five characters XML reserves, and no control bytes. */
static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			/* XML 1.0 has no way to say most control characters at all. */
			fputc(c < 0x20 && c != '\t' && c != '\n' ? '?' : c, f);
		}
	}
}

void cli_check_junit(FILE *f, const struct cli_check *c, const char *name)
{
	size_t skipped = c->unmeasured;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"cgtrace check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
		   "skipped=\"%zu\">\n",
		c->n, c->broken, c->unreadable, skipped);
	fprintf(f, "  <testsuite name=\"");
	xml_text(f, name);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n", c->n,
		c->broken, c->unreadable, skipped);
	for (size_t i = 0; i < c->n; i++) {
		const struct cli_check_result *r = &c->v[i];
		fprintf(f, "    <testcase classname=\"");
		xml_text(f, r->limit ? r->limit->text : "read");
		fprintf(f, "\" name=\"");
		xml_text(f, r->subject);
		fprintf(f, "\"");
		static const char *const elem[] = {
		    [CLI_CHECK_HELD] = NULL,
		    [CLI_CHECK_BROKEN] = "failure",
		    [CLI_CHECK_UNMEASURED] = "skipped",
		    [CLI_CHECK_UNREADABLE] = "error",
		};
		const char *e = elem[r->state];
		if (!e) {
			fprintf(f, "/>\n");
			continue;
		}
		fprintf(f, ">\n      <%s message=\"", e);
		xml_text(f, r->line);
		fprintf(f, "\"");
		if (r->limit)
			fprintf(f, " type=\"%s\"", cli_limit_name(r->limit->kind));
		fprintf(f, ">");
		xml_text(f, r->line);
		fprintf(f, "</%s>\n    </testcase>\n", e);
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
}

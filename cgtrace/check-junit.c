/* SPDX-License-Identifier: MIT */
/* The JUnit report of cgtrace check (check-junit.h). */
#include "check-junit.h"
/* Attribute values and text escaped as the SVG writer does: any string a trace holds. */
#include "svg.h"

void cli_check_junit(FILE *f, const struct cli_check *c, const char *name)
{
	size_t skipped = c->unmeasured;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f,
	        "<testsuites name=\"cgtrace check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
	        "skipped=\"%zu\">\n",
	        c->n, c->broken, c->unreadable, skipped);
	fprintf(f, "  <testsuite name=\"");
	svg_escape(f, name, true);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n", c->n,
	        c->broken, c->unreadable, skipped);
	for (size_t i = 0; i < c->n; i++) {
		const struct cli_check_result *r = &c->v[i];
		fprintf(f, "    <testcase classname=\"");
		svg_escape(f, r->limit ? r->limit->text : "read", true);
		fprintf(f, "\" name=\"");
		svg_escape(f, r->subject, true);
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
		svg_escape(f, r->line, true);
		fprintf(f, "\"");
		if (r->limit)
			fprintf(f, " type=\"%s\"", cli_limit_name(r->limit->kind));
		fprintf(f, ">");
		svg_escape(f, r->line, true);
		fprintf(f, "</%s>\n    </testcase>\n", e);
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
}

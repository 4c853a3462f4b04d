/* SPDX-License-Identifier: MIT */
/* cgtrace validate: every rule of the format, plus warnings for what is legal but odd. */
#include <errno.h>

#include "cli.h"

struct validate_args {
	bool strict;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_validate = {
	.name = "validate",
	.args = "[--strict] TRACE",
	.help = "Checks every rule of candle-graph/trace/6 and stops at the first broken one\n"
		"with PATH:LINE: message (exit status 1). Legal oddities are warnings on\n"
		"stderr: spans never closed, an allocation of an id that is already live,\n"
		"frees of ids never allocated, capture_step 0, a cut-off last line, a\n"
		"cgprobe_min_bytes tag that is not a decimal number (readers ignore it), a\n"
		"second, different identity for one device (the first is kept).\n\n",
	.label_width = 11,
	.opts = (const struct cli_opt[]){
		{.name = "strict", .offset = offsetof(struct validate_args, strict),
		 .help = "also name each extension field and kind the trace uses (the\n"
			 "ones a strict trace/6 reader does not know: cgprobe_* fields and\n"
			 "kinds, managed, oom_request_bytes), one warning line each at its\n"
			 "first record with the number of records carrying it, and exit 1\n"
			 "when there is any (export --format jsonl --strict leaves them out)"},
		{0},
	},
	.help_tail = "\nLike summary and memory, it reads the trace once, in memory bounded by the\n"
		     "allocations live at once, not by the trace's size. Memory records that go\n"
		     "back in time (another producer's trace) make it read the trace again in\n"
		     "full, with a note on stderr; standard input is spooled as it is read to an\n"
		     "unlinked file in $TMPDIR (else /tmp) for that second pass.\n",
	.run = run,
};

static void warnings(const char *path, const struct cgtrace_doc *doc)
{
	struct cgtrace_meta m;
	size_t open = 0;
	cgtrace_doc_meta(doc, &m);
	if (m.capture_step == 0)
		fprintf(stderr, "%s: warning: capture_step is 0; it is one-based\n", path);
	for (size_t i = 0; i < cgtrace_doc_count(doc, CGTRACE_KIND_SPAN_START); i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(doc, i, &s);
		open += !s.closed;
	}
	if (open)
		fprintf(stderr, "%s: warning: %zu span(s) never closed\n", path, open);
	uint64_t min;
	if (cgtrace_doc_min_bytes(doc, &min) == -EINVAL)
		fprintf(stderr, "%s: warning: tag cgprobe_min_bytes '%s' is not a decimal number; "
				"ignored\n", path, cli_tag(doc, "cgprobe_min_bytes"));
	char note[192];
	if (cli_capture_note(note, sizeof(note), doc))
		fprintf(stderr, "%s: warning: %s\n", path, note);
	if (cli_inherited_note(note, sizeof(note), doc))
		fprintf(stderr, "%s: warning: %s\n", path, note);
	uint64_t conflicts = cgtrace_doc_device_info_conflicts(doc);
	if (conflicts)
		fprintf(stderr,
			"%s: warning: %llu device identity(ies) differ from the device's "
			"first; the first is kept\n",
			path, (unsigned long long)conflicts);
	struct cgtrace_memory_report *rep;
	if (cgtrace_memory_analyze(doc, &rep) < 0)
		return;
	if (rep->realloc_live_count)
		fprintf(stderr,
			"%s: warning: %llu allocation(s) of a tensor_id that was already live\n",
			path, (unsigned long long)rep->realloc_live_count);
	if (rep->unknown_free_count)
		fprintf(stderr, "%s: warning: %llu free(s) of a tensor_id that was not live\n",
			path, (unsigned long long)rep->unknown_free_count);
	cgtrace_memory_report_free(rep);
}

/* --strict: one line per extension the trace uses; their number. */
static size_t extensions(const char *path, const struct cgtrace_doc *doc)
{
	size_t n = cgtrace_doc_extension_count(doc);
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_extension e;
		cgtrace_doc_extension(doc, i, &e);
		char where[48];
		snprintf(where, sizeof(where), e.first_is_record ? " record %llu" : "%llu",
			 (unsigned long long)e.first);
		char what[160];
		if (e.field)
			snprintf(what, sizeof(what), "extension field `%s` on %s records", e.field,
				 e.kind_name);
		else
			snprintf(what, sizeof(what), "extension kind `%s`", e.kind_name);
		fprintf(stderr, "%s:%s: warning: %s (%llu record(s)), not strict trace/6\n", path,
			where, what, (unsigned long long)e.records);
	}
	return n;
}

static int run(int argc, char **argv)
{
	struct validate_args a = {0};
	int status;
	const char *path = cli_parse_trace(&cli_validate, argc, argv, &a, &status);
	if (!path)
		return status;
	struct cgtrace_doc *doc = cli_load_flags(
		path, CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_NO_STACKS |
			  (a.strict ? CGTRACE_READ_EXTENSIONS : 0));
	if (!doc)
		return CLI_FAIL;
	warnings(path, doc);
	char n[32];
	uint64_t records = 0;
	/* Identities ride on records now; the table counts devices, not lines. */
	for (int k = CGTRACE_KIND_META; k < CGTRACE_KIND_COUNT; k++)
		if (k != CGTRACE_KIND_DEVICE_INFO)
			records += cgtrace_doc_records(doc, (enum cgtrace_kind)k);
	/* A compact trace has no lines: it is cut inside a block, after its last whole record. */
	char cut[96] = "";
	uint64_t decoded;
	if (cgtrace_doc_cut_in_block(doc, &decoded))
		snprintf(cut, sizeof(cut), " (cut inside a block after %llu records; the rest ignored)",
			 (unsigned long long)decoded);
	else if (cgtrace_doc_truncated(doc))
		snprintf(cut, sizeof(cut), " (last line cut short and ignored)");
	printf("%s: valid %s trace, %s records%s\n", path, CGTRACE_SCHEMA, cli_count(n, records),
	       cut);
	size_t ext = a.strict ? extensions(path, doc) : 0;
	if (ext)
		fprintf(stderr, "%s: not strict trace/6: %zu extension(s) in use\n", path, ext);
	cgtrace_doc_free(doc);
	return ext ? CLI_FAIL : CLI_OK;
}

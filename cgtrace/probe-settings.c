/* SPDX-License-Identifier: MIT */
/*
 * The probe's settings as its meta record carries them (tags cgprobe_*):
 * what a reader must tell a user because the trace leaves something out.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *cli_tag(const struct cgtrace_doc *doc, const char *key)
{
	struct cgtrace_meta m;
	cgtrace_doc_meta(doc, &m);
	for (size_t i = 0; i < m.n_tags; i++)
		if (strcmp(m.tags[i].key, key) == 0)
			return m.tags[i].value;
	return NULL;
}

bool cli_min_bytes_note(char *buf, size_t len, const struct cgtrace_doc *doc, bool exact,
			enum cli_note_style style)
{
	uint64_t min;
	char n[32];
	if (cgtrace_doc_min_bytes(doc, &min) < 0 || min == 0)
		return false;
	/*
	 * The threshold as the user gave it, never rounded to KiB; --bytes
	 * gives bare digits, as it does for every size.
	 */
	if (exact) {
		cli_bytes(n, min, true);
	} else {
		cli_count(n, min);
		strcat(n, " B");
	}
	if (style == CLI_NOTE_BRIEF)
		snprintf(buf, len, "allocations under %s not recorded (--min-bytes): the peaks "
				   "leave them out", n);
	else
		snprintf(buf, len, "allocations under %s were not recorded (CGPROBE_MIN_BYTES): "
				   "peaks and totals leave them out", n);
	return true;
}

bool cli_inherited_note(char *buf, size_t len, const struct cgtrace_doc *doc)
{
	const char *inherited = cli_tag(doc, "cgprobe_inherited");
	if (!inherited || strcmp(inherited, "partial") != 0)
		return false;
	const char *parent = cli_tag(doc, "forked_from");
	snprintf(buf, len,
		 "inherited heap missing (cgprobe_inherited partial): blocks held from pid %s at "
		 "the fork are not in the trace; peaks leave them out",
		 parent && *parent ? parent : "?");
	return true;
}

bool cli_capture_note(char *buf, size_t len, const struct cgtrace_doc *doc)
{
	const char *reached = cli_tag(doc, "cgprobe_capture_reached");
	if (!reached || strcmp(reached, "no") != 0)
		return false;
	struct cgtrace_meta m;
	cgtrace_doc_meta(doc, &m);
	snprintf(buf, len, "capture window (update %llu) never reached: the trace holds no records",
		 (unsigned long long)m.capture_step);
	return true;
}

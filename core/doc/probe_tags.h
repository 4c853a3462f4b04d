/* SPDX-License-Identifier: MIT */
/* The probe's settings as its meta record carries them (tags cgprobe_*). */
#ifndef CG_PROBE_TAGS_H
#define CG_PROBE_TAGS_H

struct cgtrace_doc;

/* The value of meta tag key, NULL when the trace has none. */
const char *cg_doc_tag(const struct cgtrace_doc *d, const char *key);

#endif

/* SPDX-License-Identifier: MIT */
/* The probe's settings as its meta record carries them (tags cgprobe_*). */
#include <errno.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "export.h"
#include "num_scan.h"
#include "probe_tags.h"

const char *cg_doc_tag(const struct cgtrace_doc *d, const char *key)
{
	for (size_t i = 0; i < d->meta.n_tags; i++)
		if (strcmp(d->meta.tags[i].key, key) == 0)
			return d->meta.tags[i].value;
	return NULL;
}

CG_EXPORT int cgtrace_doc_min_bytes(const struct cgtrace_doc *d, uint64_t *out)
{
	const char *v = cg_doc_tag(d, "cgprobe_min_bytes");
	if (!v)
		return -ENOENT;
	/* Tags are free text; anything but a plain decimal is not the probe's. */
	return cg_scan_u64(v, strlen(v), out) < 0 ? -EINVAL : 0;
}

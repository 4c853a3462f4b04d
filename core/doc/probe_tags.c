/* SPDX-License-Identifier: MIT */
/* The probe's settings as its meta record carries them (tags cgprobe_*). */
#include <errno.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "export.h"
#include "num_scan.h"

CG_EXPORT int cgtrace_doc_min_bytes(const struct cgtrace_doc *d, uint64_t *out)
{
	for (size_t i = 0; i < d->meta.n_tags; i++) {
		const char *v = d->meta.tags[i].value;
		if (strcmp(d->meta.tags[i].key, "cgprobe_min_bytes") != 0)
			continue;
		/* Tags are free text; anything but a plain decimal is not the probe's. */
		return cg_scan_u64(v, strlen(v), out) < 0 ? -EINVAL : 0;
	}
	return -ENOENT;
}

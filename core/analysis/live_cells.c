/* SPDX-License-Identifier: MIT */
/* A device's live bytes in a few cells over the trace: the summary's sparkline. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "export.h"
#include "memory_replay.h"
#include "memory_stream.h"
#include "stream_sink.h"
#include "peak_series.h"

static long device_number(const struct cgtrace_doc *d, const char *device)
{
	for (size_t k = 0; k < d->devices.len; k++)
		if (strcmp(cg_doc_str(d, cg_doc_device_str(d, (uint16_t)k)), device) == 0)
			return (long)k;
	return -1;
}

/* A full document's time span: of every memory record, and of the checkpoints after them. */
static void full_time(const struct cgtrace_doc *d, uint64_t *lo, uint64_t *hi)
{
	for (size_t i = 0; i < d->memory.len; i++) {
		uint64_t t = CG_VEC_AT(&d->memory, struct cg_mem, i)->timestamp_ns;
		if (i == 0 || t < *lo)
			*lo = t;
		if (i == 0 || t > *hi)
			*hi = t;
	}
	for (size_t i = 0; d->memory.len && i < d->devmem.len; i++) {
		uint64_t t = CG_VEC_AT(&d->devmem, struct cg_devmem, i)->timestamp_ns;
		if (t > *hi)
			*hi = t;
	}
}

CG_EXPORT int cgtrace_doc_live_cells(const struct cgtrace_doc *d, const char *device,
				     uint64_t *out, size_t n, uint64_t *t0, uint64_t *t1)
{
	if (!n || n > UINT32_MAX)
		return -EINVAL;
	long dev = device_number(d, device);
	if (dev < 0)
		return -ENOENT;
	uint64_t lo = 0, hi = 0;
	const struct cg_stream *st;
	struct cg_stream *own;
	int r = cg_replay_or_stream(d, &st, &own);
	if (r < 0)
		return r;
	/* Every device's cells line up: the trace's span, not the device's. */
	if (own)
		full_time(d, &lo, &hi);
	else
		cg_stream_time(st, &lo, &hi);
	const struct cg_stream_dev *dv =
		(size_t)dev < st->devs.len ? CG_VEC_AT(&st->devs, struct cg_stream_dev, dev) : NULL;
	const struct cg_peak_series *s = dv ? &dv->series : NULL;
	r = s && s->any ? 0 : -ENOENT;
	if (r == 0) {
		cg_series_cells(s, lo, hi, out, (unsigned)n);
		*t0 = lo;
		*t1 = hi;
	}
	cg_stream_free(own);
	return r;
}

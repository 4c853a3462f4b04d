/* SPDX-License-Identifier: MIT */
/* A device's live bytes in a few cells over the trace: the summary's sparkline. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "doc_stream.h"
#include "export.h"
#include "memory_replay.h"
#include "peak_series.h"

static long device_number(const struct cgtrace_doc *d, const char *device)
{
	for (size_t k = 0; k < d->devices.len; k++)
		if (strcmp(cg_doc_str(d, cg_doc_device_str(d, (uint16_t)k)), device) == 0)
			return (long)k;
	return -1;
}

/* A full document's series of device dev, and the time span of every record. */
static int replay_series(const struct cgtrace_doc *d, uint16_t dev, struct cg_peak_series *out,
			 uint64_t *lo, uint64_t *hi)
{
	struct cg_replay r;
	int ret = cg_replay_init(&r, d);
	memset(out, 0, sizeof(*out));
	bool any = false;
	while (ret == 0 && r.pos < d->memory.len) {
		struct cg_replay_did did;
		uint16_t k = cg_replay_step_did(&r, &did);
		uint64_t t = CG_VEC_AT(&d->memory, struct cg_mem, did.index)->timestamp_ns;
		if (!any)
			*lo = t;
		*hi = t; /* analysis order is time order */
		any = true;
		if (k == dev)
			cg_series_add(out, t, r.dev[k].live);
	}
	cg_replay_fini(&r);
	for (size_t i = 0; i < d->devmem.len; i++) {
		uint64_t t = CG_VEC_AT(&d->devmem, struct cg_devmem, i)->timestamp_ns;
		if (any && t > *hi)
			*hi = t;
	}
	return ret;
}

CG_EXPORT int cgtrace_doc_live_cells(const struct cgtrace_doc *d, const char *device,
				     uint64_t *out, size_t n, uint64_t *t0, uint64_t *t1)
{
	if (!n || n > UINT32_MAX)
		return -EINVAL;
	long dev = device_number(d, device);
	if (dev < 0)
		return -ENOENT;
	struct cg_peak_series local;
	const struct cg_peak_series *s = &local;
	uint64_t lo = 0, hi = 0;
	if (d->stream) {
		const struct cg_stream *st = d->stream;
		if ((size_t)dev >= st->devs.len)
			return -ENOENT;
		s = &CG_VEC_AT(&st->devs, struct cg_stream_dev, dev)->series;
		/* Every device's first value: the cells of a trace's devices line up. */
		bool any = false;
		for (size_t k = 0; k < st->devs.len; k++) {
			const struct cg_peak_series *o = &CG_VEC_AT(&st->devs, struct cg_stream_dev, k)->series;
			if (o->any && (!any || o->base < lo))
				lo = o->base;
			any |= o->any;
		}
		hi = st->ts_hi;
	} else {
		int r = replay_series(d, (uint16_t)dev, &local, &lo, &hi);
		if (r < 0)
			return r;
	}
	if (!s->any)
		return -ENOENT;
	cg_series_cells(s, lo, hi, out, (unsigned)n);
	*t0 = lo;
	*t1 = hi;
	return 0;
}

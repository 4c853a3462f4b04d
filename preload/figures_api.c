/* SPDX-License-Identifier: MIT */
/*
 * The live figures' entry points (include/cgprobe.h: cgprobe_memory_*):
 * each holds the writer after a drain of every ring (writer.h), so the
 * figures it reads (figures.h) count every event pushed before the call,
 * and the writer changes nothing while they are read.
 */
#include <errno.h>
#include <string.h>

#include "cgprobe.h"
#include "figures.h"
#include "probe.h"
#include "state.h"
#include "thread.h"
#include "writer.h"

struct query {
	const char *device;
	void *out;
	size_t size;
	uint64_t mark;
};

/* q answered by fn with the writer held: fn's result, or the hold's error. */
static int held(int (*fn)(struct query *q), struct query *q)
{
	uint32_t ticket;
	if (!cg_recording())
		return -ENODEV;
	/* What the probe allocates meanwhile is not the program's, nor waits on the writer. */
	cg_self.guard++;
	int r = cg_writer_hold(CG_PARK_ROUND, 5000, &ticket);
	if (r == 0) {
		r = fn(q);
		cg_writer_release(ticket);
	} else if (r == -EBUSY) {
		r = -ETIMEDOUT;
	}
	cg_self.guard--;
	return r;
}

static int do_mark(struct query *q)
{
	q->mark = cg_figures_mark();
	return 0;
}

static int do_now(struct query *q)
{
	struct cgprobe_memory_figures f = {0};
	int i = cg_figures_device(q->device);
	f.mark = cg_fig.mark;
	if (i >= 0) {
		const struct cg_fig_dev *d = &cg_fig.dev[i];
		f = (struct cgprobe_memory_figures){d->live,	  d->count,	 d->peak,
						    d->at_mark,	  cg_fig.mark,	 d->site_bytes,
						    d->kept_bytes};
	}
	memcpy(q->out, &f, q->size < sizeof(f) ? q->size : sizeof(f));
	return i < 0 ? i : 0;
}

static int do_devices(struct query *q)
{
	return cg_figures_devices(q->out, q->size);
}

static int site_of(struct query *q, bool kept)
{
	struct cgprobe_memory_site s;
	int i = cg_figures_device(q->device);
	int r = i < 0 ? i : cg_figures_site((uint8_t)i, kept, &s);
	if (r == 0)
		memcpy(q->out, &s, q->size < sizeof(s) ? q->size : sizeof(s));
	return r;
}

static int do_site(struct query *q)
{
	return site_of(q, false);
}

static int do_kept_site(struct query *q)
{
	return site_of(q, true);
}

CG_PROBE_EXPORT int cgprobe_memory_mark(uint64_t *mark)
{
	struct query q = {0};
	int r = held(do_mark, &q);
	if (r == 0 && mark)
		*mark = q.mark;
	return r;
}

CG_PROBE_EXPORT int cgprobe_memory_now(const char *device, struct cgprobe_memory_figures *out,
				       size_t size)
{
	if (!device || !out)
		return -EINVAL;
	return held(do_now, &(struct query){device, out, size, 0});
}

CG_PROBE_EXPORT int cgprobe_memory_devices(char *buf, size_t len)
{
	if (!buf || !len)
		return -EINVAL;
	return held(do_devices, &(struct query){NULL, buf, len, 0});
}

CG_PROBE_EXPORT int cgprobe_memory_site(const char *device, struct cgprobe_memory_site *out,
					size_t size)
{
	if (!device || !out)
		return -EINVAL;
	return held(do_site, &(struct query){device, out, size, 0});
}

CG_PROBE_EXPORT int cgprobe_memory_kept_site(const char *device, struct cgprobe_memory_site *out,
					     size_t size)
{
	if (!device || !out)
		return -EINVAL;
	return held(do_kept_site, &(struct query){device, out, size, 0});
}

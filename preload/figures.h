/* SPDX-License-Identifier: MIT */
/*
 * The live figures of include/cgprobe.h (cgprobe_memory_now): per device,
 * the bytes of recorded allocations live now, and the highest they reached
 * since the last mark. The live table counts every insert and remove here
 * (live.h), so the figures follow the events in the order the writer
 * applies them: the peak is the exact maximum over that order, whatever
 * path the event took (a record, a capture window's gate, a fork child's
 * inheritance), and the hooks pay nothing for it.
 *
 * Writer thread only, like the live table; another thread reads them only
 * while the writer is held after a drain (writer.h: cg_writer_hold,
 * CG_PARK_ROUND), which is what the entry points do (figures_api.c).
 */
#ifndef CG_FIGURES_H
#define CG_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgprobe.h"

struct cg_fig_dev {
	uint64_t live, count; /* bytes and allocations live now */
	uint64_t peak;        /* the highest live since the mark */
	uint64_t at_mark;     /* live when the mark was made */
	/*
	 * The allocation the peak is put down to (include/cgprobe.h:
	 * peak_alloc_bytes): the largest that raised it since the mark,
	 * unless it was freed before a later one raised it. site: its
	 * stack's trace id, 0 unknown; site_key: its live table key while
	 * it is live, else 0.
	 */
	uint64_t site, site_key, site_bytes;
	/*
	 * An allocation made since the mark and live still, which a leak is
	 * put down to (include/cgprobe.h: kept_alloc_bytes): the largest of
	 * those made since the one before it was freed. kept_key 0: none.
	 */
	uint64_t kept_site, kept_key, kept_bytes;
	bool seen;            /* the device had an allocation in this session */
};

struct cg_figures {
	struct cg_fig_dev dev[256]; /* by device index (probe.h: CG_PROBE_HOST the host) */
	uint64_t mark;              /* the last mark's number, 0 before any */
	uint16_t raised;            /* device + 1 whose peak the last add raised, else 0 */
	uint16_t kept;              /* device + 1 whose kept allocation the last add became */
};
extern struct cg_figures cg_fig;

/*
 * A block of bytes, the table's key, live on device. The largest block
 * that raised the peak, not the last: a small one just after a large one
 * would otherwise take the blame.
 */
static inline void cg_figures_add(uint8_t device, uint64_t key, uint64_t bytes)
{
	struct cg_fig_dev *d = &cg_fig.dev[device];
	d->live += bytes;
	d->count++;
	d->seen = true;
	cg_fig.raised = 0;
	cg_fig.kept = 0;
	if (!d->kept_key || bytes >= d->kept_bytes) {
		d->kept_site = 0;
		d->kept_key = key;
		d->kept_bytes = bytes;
		cg_fig.kept = (uint16_t)(device + 1);
	}
	if (d->live > d->peak) {
		d->peak = d->live;
		if (!d->site_key || bytes >= d->site_bytes) {
			/* Known once the writer names its stack (cg_figures_stack). */
			d->site = 0;
			d->site_key = key;
			d->site_bytes = bytes;
			cg_fig.raised = (uint16_t)(device + 1);
		}
	}
}

static inline void cg_figures_sub(uint8_t device, uint64_t key, uint64_t bytes)
{
	struct cg_fig_dev *d = &cg_fig.dev[device];
	d->live -= bytes;
	d->count--;
	if (key == d->site_key)
		d->site_key = 0;
	if (key == d->kept_key)
		d->kept_key = d->kept_bytes = 0;
}

/* The writer, after an allocation's insert: the stack it was recorded with. */
static inline void cg_figures_stack(uint64_t stack)
{
	if (cg_fig.raised) {
		cg_fig.dev[cg_fig.raised - 1].site = stack;
		cg_fig.raised = 0;
	}
	if (cg_fig.kept) {
		cg_fig.dev[cg_fig.kept - 1].kept_site = stack;
		cg_fig.kept = 0;
	}
}

/*
 * A new trace: its stack ids are new, so no site is known; keep_live: the
 * live table stays (a fork child), else nothing is live.
 */
void cg_figures_new_trace(bool keep_live);

/* The calls below: with the writer held (or not running). */

/* Every device's peak starts again from what is live now; returns the mark's number. */
uint64_t cg_figures_mark(void);
/* The index of the device named name, -ENOENT when none of that name had an allocation. */
int cg_figures_device(const char *name);
/* The devices that had an allocation, "cpu" first, comma-separated into buf; their count. */
int cg_figures_devices(char *buf, size_t len);

/*
 * The site of device's peak since the mark (kept: of its kept allocation),
 * the innermost Python frame of its stack (the first that names code): 0,
 * -ENOENT when unknown or without Python frames.
 */
int cg_figures_site(uint8_t device, bool kept, struct cgprobe_memory_site *out);

#endif

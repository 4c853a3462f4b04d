/* SPDX-License-Identifier: MIT */
/* A trace's head: the meta record with its tags, and the root span's start. */
#ifndef CG_META_H
#define CG_META_H

#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "wallclock.h"

/* Where a session's process came from, for its meta tags. */
struct cg_meta_origin {
	pid_t forked_from; /* the parent a fork child came from, 0 for none (tag forked_from) */
	/* A fork child's inherited blocks: "complete", "partial" (tag cgprobe_inherited), or NULL. */
	const char *inherited;
	/* CGPROBE_CAPTURE=update: whether the window came, "yes" or "no"; else NULL. */
	const char *capture_reached;
	/* The trace's time 0 on the other clocks (tags cgprobe_clock_*, cgprobe_boot_id). */
	const struct cg_wallclock *clock;
};

/*
 * The meta record and the root span's start, as the first lines of a
 * trace; with the figures the trace ends with as empty tags, which the
 * end fills in place (meta_end.h).
 */
void cg_meta_format(struct cg_buf *b, uint64_t unix_ns, const struct cg_meta_origin *origin);

#endif

/* SPDX-License-Identifier: MIT */
/* A trace's head: the meta record with its tags, and the root span's start. */
#ifndef CG_META_H
#define CG_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "encoder.h"

/* Where a session's process came from, for its meta tags. */
struct cg_meta_origin {
	pid_t forked_from; /* the parent a fork child came from, 0 for none (tag forked_from) */
	/* A fork child's inherited blocks: "complete", "partial" (tag cgprobe_inherited), or NULL. */
	const char *inherited;
	/* CGPROBE_CAPTURE=update: whether the window came, "yes" or "no"; else NULL. */
	const char *capture_reached;
};

/*
 * The meta record and the root span's start, as the first lines of a
 * trace. The figures the trace ends with are tags whose values are empty
 * until then, beside a tag of spaces whose room they take
 * (cg_meta_end_patch): a trace's head is rewritten in place, never moved.
 */
void cg_meta_format(struct cg_buf *b, uint64_t unix_ns, const struct cg_meta_origin *origin);

/* The longest head that the end rewrites. */
#define CG_META_HEAD_MAX (64u << 10)
/*
 * In the n bytes of a head cg_meta_format made (or this patched before):
 * the end figures v written into their tags, the room tag shortened by as
 * much, so that the bytes stay n. False, and p as it was, when they do
 * not fit or the tags are not there.
 */
bool cg_meta_end_patch(char *p, size_t n, const struct cg_enc_end *v);

#endif

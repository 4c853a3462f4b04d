/* SPDX-License-Identifier: MIT */
/*
 * The figures a trace ends with (docs/probe.md, "The probe's own
 * memory"), in its head: the meta record must stay the trace's first
 * record, so the head carries their tags empty from the start, beside a
 * tag of spaces whose room they take when the trace ends; the head is
 * rewritten in place, its length unchanged, never moved.
 */
#ifndef CG_META_END_H
#define CG_META_END_H

#include <stdbool.h>
#include <stddef.h>

#include "encoder.h"

/* The longest head that the end rewrites. */
#define CG_HEAD_MAX (64u << 10)

/* The tags as the head starts with them: add(ctx, key, value) for each. */
void cg_meta_end_tags(void (*add)(void *ctx, const char *key, const char *value), void *ctx);
/*
 * In the n bytes of a head (cg_meta_format's, or one this patched
 * before): the figures v written into their tags and the room tag
 * shortened by as much, so that the bytes stay n. False, and p as it
 * was, when they do not fit or the tags are not there.
 */
bool cg_meta_end_patch(char *p, size_t n, const struct cg_enc_end *v);

#endif

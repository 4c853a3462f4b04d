/* SPDX-License-Identifier: MIT */
/*
 * A device's live bytes over time, as a job keeps it for the physical
 * devices' sums: each moment as varints of its differences from the one
 * before (a few bytes where three numbers take 24), so that a job of
 * device-heavy traces holds less than its reads did, and read back in
 * order by a cursor. The last moment may still change: records of one
 * timestamp make one moment.
 */
#include <errno.h>
#include <string.h>

#include "job.h"
#include "varint.h"

static uint8_t *room(struct cg_job_series *s, size_t n)
{
	if (s->buf.len + n > s->buf.cap && cg_vec_grow(&s->buf, 1, s->buf.len + n) < 0)
		return NULL;
	return (uint8_t *)s->buf.p + s->buf.len;
}

int cg_series_put(struct cg_job_series *s, uint64_t t, uint64_t live, uint64_t pre)
{
	if (s->n && t == s->t) {
		/* The same moment: its point written again from the one before. */
		s->buf.len = s->last_off;
		s->n--;
	} else {
		s->prev_t = s->t;
		s->prev_live = s->live;
		s->prev_pre = s->pre;
	}
	uint8_t *w = room(s, 3 * CG_VARINT_MAX), *at = w;
	if (!w)
		return -ENOMEM;
	s->last_off = s->buf.len;
	w = cg_varint_put(w, t - s->prev_t);
	w = cg_varint_put(w, cg_zigzag((int64_t)(live - s->prev_live)));
	w = cg_varint_put(w, cg_zigzag((int64_t)(pre - s->prev_pre)));
	s->buf.len += (size_t)(w - at);
	s->t = t;
	s->live = live;
	s->pre = pre;
	s->n++;
	return 0;
}

void cg_series_begin(const struct cg_job_series *s, struct cg_series_cursor *c)
{
	*c = (struct cg_series_cursor){.p = s->buf.p, .end = (const uint8_t *)s->buf.p + s->buf.len};
}

bool cg_series_next(struct cg_series_cursor *c)
{
	uint64_t dt, dl, dp;
	if (!c->p || c->p >= c->end || cg_varint_get(&c->p, c->end, &dt) < 0 ||
	    cg_varint_get(&c->p, c->end, &dl) < 0 || cg_varint_get(&c->p, c->end, &dp) < 0)
		return false;
	c->t += dt;
	c->live += (uint64_t)cg_unzigzag(dl);
	c->pre += (uint64_t)cg_unzigzag(dp);
	return true;
}

void cg_series_free(struct cg_job_series *s)
{
	cg_vec_free(&s->buf, 1);
	s->n = 0;
}

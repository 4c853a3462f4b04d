/* SPDX-License-Identifier: MIT */
/*
 * A device's live bytes over time, as a job keeps it for the physical
 * devices' sums: each moment as varints of its differences from the one
 * before (a few bytes where three numbers take 24). Past CG_SERIES_HELD (256 KiB)
 * bytes the older moments go to an unlinked file in TMPDIR, so that a job
 * of device-heavy traces holds a buffer per process, not every moment of
 * all of them; cursors read them back in order, a piece of the file at a
 * time. The last moment may still change (records of one timestamp make
 * one moment), so it always stays in memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "varint.h"
#include "write_all.h"

#define CG_SERIES_HELD (1u << 18)
#define CG_SERIES_CHUNK (1u << 16)

static uint8_t *room(struct cg_job_series *s, size_t n)
{
	if (s->buf.len + n > s->buf.cap && cg_vec_grow(&s->buf, 1, s->buf.len + n) < 0)
		return NULL;
	return (uint8_t *)s->buf.p + s->buf.len;
}

static int spill_file(void)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/cgtrace-job.XXXXXX", dir) >= sizeof(path))
		return -1;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* The moments before the last to the file; where there is no file to be had, they stay. */
static void spill(struct cg_job_series *s)
{
	if (s->fd < 0 && (s->fd = spill_file()) < 0) {
		s->no_spill = true;
		return;
	}
	if (s->last_off == 0)
		return;
	if (cg_write_all(s->fd, s->buf.p, s->last_off) < 0) {
		/* A full disk: the file up to spilled stays good; the rest stays in memory. */
		s->no_spill = true;
		return;
	}
	s->spilled += s->last_off;
	memmove(s->buf.p, (uint8_t *)s->buf.p + s->last_off, s->buf.len - s->last_off);
	s->buf.len -= s->last_off;
	s->last_off = 0;
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
	if (s->buf.len >= CG_SERIES_HELD && !s->no_spill)
		spill(s);
	return 0;
}

int cg_series_begin(const struct cg_job_series *s, struct cg_series_cursor *c)
{
	*c = (struct cg_series_cursor){.s = s};
	if (s->spilled) {
		c->chunk = malloc(CG_SERIES_CHUNK);
		if (!c->chunk)
			return -ENOMEM;
		c->p = c->end = c->chunk;
	} else {
		c->in_memory = true;
		c->p = s->buf.p;
		c->end = (const uint8_t *)s->buf.p + s->buf.len;
	}
	return 0;
}

/* At least one whole moment ahead in the file's piece, or the file done: the memory next. */
static bool fill(struct cg_series_cursor *c)
{
	if (c->in_memory || (size_t)(c->end - c->p) >= 3 * CG_VARINT_MAX)
		return true;
	const struct cg_job_series *s = c->s;
	if (c->file_at == s->spilled) {
		if (c->p < c->end)
			return true; /* the file's last moments */
		c->in_memory = true;
		c->p = s->buf.p;
		c->end = (const uint8_t *)s->buf.p + s->buf.len;
		return true;
	}
	size_t left = (size_t)(c->end - c->p);
	memmove(c->chunk, c->p, left);
	size_t want = CG_SERIES_CHUNK - left;
	if (want > s->spilled - c->file_at)
		want = (size_t)(s->spilled - c->file_at);
	ssize_t got = pread(s->fd, c->chunk + left, want, (off_t)c->file_at);
	if (got <= 0)
		return false;
	c->file_at += (uint64_t)got;
	c->p = c->chunk;
	c->end = c->chunk + left + got;
	return true;
}

bool cg_series_next(struct cg_series_cursor *c)
{
	uint64_t dt, dl, dp;
	if (!fill(c) || !c->p || c->p >= c->end || cg_varint_get(&c->p, c->end, &dt) < 0 ||
	    cg_varint_get(&c->p, c->end, &dl) < 0 || cg_varint_get(&c->p, c->end, &dp) < 0)
		return false;
	c->t += dt;
	c->live += (uint64_t)cg_unzigzag(dl);
	c->pre += (uint64_t)cg_unzigzag(dp);
	return true;
}

void cg_series_end(struct cg_series_cursor *c)
{
	free(c->chunk);
	c->chunk = NULL;
}

void cg_series_free(struct cg_job_series *s)
{
	cg_vec_free(&s->buf, 1);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->no_spill = false;
	s->n = s->spilled = 0;
}

/* SPDX-License-Identifier: MIT */
/* The update and phase of each moment (update_clock.h). */
#include "update_clock.h"

#include <errno.h>

#include "cgtrace.h"

static long find_pair(const struct cg_vec *v, uint32_t span)
{
	const uint32_t *p = v->p;
	for (size_t i = v->len; i-- > 0;)
		if (p[2 * i] == span)
			return (long)i;
	return -1;
}

static int push_pair(struct cg_vec *v, uint32_t span, uint32_t val)
{
	if (cg_vec_grow(v, 2 * sizeof(uint32_t), v->len + 1) < 0)
		return -ENOMEM;
	uint32_t *p = (uint32_t *)v->p + 2 * v->len++;
	p[0] = span;
	p[1] = val;
	return 0;
}

static void drop_pair(struct cg_vec *v, size_t i)
{
	uint32_t *p = v->p;
	for (size_t k = i + 1; k < v->len; k++) {
		p[2 * (k - 1)] = p[2 * k];
		p[2 * (k - 1) + 1] = p[2 * k + 1];
	}
	v->len--;
}

static int marked(struct cg_uclock *c, const struct cg_span_ev *ev)
{
	if (ev->end) {
		if (!c->m_update || ev->span != c->m_span)
			return 0;
		c->m_update = 0;
		return CG_UC_MARKED;
	}
	c->marked = true;
	c->m_count++;
	c->m_span = ev->span;
	c->m_update = ev->update;
	c->m_start = ev->ts;
	c->m_last = ev->update;
	return CG_UC_MARKED;
}

/* Forward steps: the first to open while none is begins the next inferred update. */
static int inferred(struct cg_uclock *c, const struct cg_span_ev *ev)
{
	const uint32_t *f = c->forwards.p;
	if (ev->end) {
		for (size_t i = c->forwards.len; i-- > 0;)
			if (f[i] == ev->span) {
				((uint32_t *)c->forwards.p)[i] = f[c->forwards.len - 1];
				c->forwards.len--;
				break;
			}
		return 0;
	}
	uint32_t *slot = CG_VEC_PUSH(&c->forwards, uint32_t);
	if (!slot)
		return -ENOMEM;
	*slot = ev->span;
	if (c->forwards.len > 1)
		return 0;
	c->i_update = c->i_base + ++c->i_count;
	c->i_start = ev->ts;
	c->i_quiet_set = false;
	return CG_UC_INFERRED;
}

static int phase(struct cg_uclock *c, const struct cg_span_ev *ev)
{
	uint32_t before = cg_uclock_phase(c);
	if (ev->end) {
		long i = find_pair(&c->phases, ev->span);
		if (i < 0)
			return 0;
		drop_pair(&c->phases, (size_t)i);
	} else if (push_pair(&c->phases, ev->span, ev->phase) < 0) {
		return -ENOMEM;
	}
	int bits = cg_uclock_phase(c) != before ? CG_UC_PHASE : 0;
	if (!c->phases.len && c->i_update) {
		c->i_quiet = ev->ts;
		c->i_quiet_set = true;
		bits |= CG_UC_QUIET;
	}
	return bits;
}

int cg_uclock_apply(struct cg_uclock *c, const struct cg_span_ev *ev)
{
	int bits = 0, r = 0;
	c->last_ts = ev->ts;
	if (ev->update)
		bits |= marked(c, ev);
	if (ev->phase == CGTRACE_STEP_FORWARD && (r = inferred(c, ev)) < 0)
		return r;
	bits |= r;
	if (ev->phase && (r = phase(c, ev)) < 0)
		return r;
	return bits | r;
}

void cg_uclock_free(struct cg_uclock *c)
{
	cg_vec_free(&c->forwards, sizeof(uint32_t));
	cg_vec_free(&c->phases, 2 * sizeof(uint32_t));
}

uint64_t cg_uclock_inferred_end(const struct cg_uclock *c, uint64_t trace_end)
{
	return c->i_quiet_set && !c->phases.len ? c->i_quiet : trace_end;
}

uint64_t cg_moment_update(const struct cg_uclock *c, const struct cg_moment_raw *m,
			  uint64_t *after)
{
	*after = 0;
	if (c->marked) {
		if (!m->m_update)
			*after = m->m_last;
		return m->m_update;
	}
	/* The last inferred update ends at its last quiet moment. */
	if (m->i_update && m->i_update == c->i_update && c->i_quiet_set && !c->phases.len &&
	    m->ts >= c->i_quiet) {
		*after = m->i_update;
		return 0;
	}
	return m->i_update;
}

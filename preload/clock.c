/* SPDX-License-Identifier: MIT */
#include "clock.h"

#include "clock_source.h"
#include "options.h"

uint64_t cg_clock_origin;
bool cg_clock_tsc;

/*
 * Settled once per process image: the stamps in the rings, and those of a
 * fork child that inherits them, must all be of one kind.
 */
void cg_clock_start(void)
{
#if defined(__x86_64__)
	static bool settled;
	if (!settled) {
		cg_clock_tsc = cg_opt.clock == CG_CLOCK_AUTO && cg_clock_source_tsc();
		settled = true;
	}
#endif
	cg_opt.clock = cg_clock_tsc ? CG_CLOCK_TSC : CG_CLOCK_MONOTONIC;
	cg_clock_origin = cg_clock_raw();
}

/*
 * A (ticks, ns) pair: the ticks read between two clock reads, paired with
 * their midpoint, the tightest of a few tries. A writer preempted between
 * a single pair's two reads would pair the ticks with a time milliseconds
 * late, and every stamp mapped through that anchor would be as late.
 */
#define PAIR_TRIES 3

static void read_pair(uint64_t *t, uint64_t *n)
{
	struct cg_clock_pair p = cg_clock_pair_read(cg_clock_ticks, PAIR_TRIES);
	*t = p.value;
	*n = p.mono_ns > cg_clock_origin ? p.mono_ns - cg_clock_origin : 0;
}

void cg_clock_map_start(struct cg_clock_map *m)
{
	read_pair(&m->t1, &m->n1);
	m->t0 = m->t1;
	m->n0 = m->n1;
	/* Until a second anchor exists, assume about 3 ticks per ns (any positive slope keeps order). */
	m->mult = cg_clock_tsc ? (1ull << 32) / 3 : 1ull << 32;
	m->measured = false;
}

void cg_clock_map_anchor(struct cg_clock_map *m)
{
	uint64_t t, n;
	read_pair(&t, &n);
	if (!cg_clock_tsc) {
		m->t0 = m->t1 = t;
		m->n0 = m->n1 = n;
		return;
	}
	/* Slopes from anchors closer than 1 ms are noisy: keep a measured one then. */
	if (t > m->t1 && (n > m->n1 + 1000000 || (!m->measured && n > m->n1 + 10000))) {
		m->measured = true;
		m->mult = (uint64_t)(((unsigned __int128)(n - m->n1) << 32) / (t - m->t1));
		m->t0 = m->t1;
		m->n0 = m->n1;
		m->t1 = t;
		m->n1 = n;
	}
}

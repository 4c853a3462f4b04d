/* SPDX-License-Identifier: MIT */
/*
 * Holding the writer thread still while another thread works on what it
 * owns: a fork (the child must inherit a live table no change is amid)
 * or a capture window opening (its snapshot is written from the
 * requesting thread).
 *
 * Each hold has a ticket no other hold ever had, and the writer waits
 * for its ticket to go, not for a word to change: a hold released and
 * another taken before the writer looked again is a new ticket, so the
 * writer answers it instead of sleeping through it.
 *
 * Two kinds. A round hold is answered at the end of a writer round that
 * drained every ring. A fork hold only needs the live table and the rings
 * to be left alone, so it is answered sooner: between events (every few
 * hundred of them), and at once while the writer is outside them
 * (waiting for work, compressing, writing, which may block on a stalled
 * pipe for good).
 */
#ifndef CG_PARK_H
#define CG_PARK_H

#include <stdbool.h>
#include <stdint.h>

enum cg_park_kind {
	CG_PARK_ROUND, /* at a round's end, every ring drained */
	CG_PARK_FORK,  /* anywhere the live table and the rings are not being changed */
};

/* Requester side. */

/*
 * Takes the hold: waits up to timeout_ms for another hold to go, and for
 * the writer to answer. 0 with *ticket set, -EBUSY when another hold
 * stayed, -ETIMEDOUT when the writer did not answer (nothing is held
 * then). ask() is called once the hold is taken, to get the writer going
 * (a round hold needs a drain); it may be NULL.
 */
int cg_park_hold(enum cg_park_kind kind, int timeout_ms, void (*ask)(void), uint32_t *ticket);
/* Ends the hold ticket names; the writer goes on. */
void cg_park_release(uint32_t ticket);

/* Writer side. */

/*
 * Answers a hold that may be answered here, and waits until it is
 * released: round_end is true at the end of a round that drained every
 * ring for a round hold; false between events.
 */
void cg_park_point(bool round_end);

/* Tells whether a fork hold waits, cheaply: a relaxed load for the writer's hot loop. */
bool cg_park_pending(void);

/*
 * Around work that leaves the live table and the rings alone and may
 * take long or block (waiting for work, a block's compression, a write):
 * a fork hold is answered at once meanwhile, and the writer stops at the
 * end of it until the hold is released.
 */
void cg_park_outside_begin(void);
void cg_park_outside_end(void);

/* No hold and no writer (a fork child, a writer about to start): the words start again. */
void cg_park_reset(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The writer thread: drains every thread's ring at least every
 * CGPROBE_FLUSH_MS and hands the events, in time order, to the trace's
 * encoder (encoder.h), which writes them out. It blocks all signals and
 * allocates nothing once running (its tables and the encoder are made up
 * front), so a crash inside malloc cannot stop the final flush.
 */
#ifndef CG_WRITER_H
#define CG_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "out.h"
#include "park.h"

enum cg_writer_req {
	CG_REQ_SYNC = 1,       /* drain and flush */
	CG_REQ_CLOSE_ROOT = 2, /* and write the root span's end */
	CG_REQ_FINISH = 4,     /* and close the file; the thread exits */
	CG_REQ_DROP_EMPTY = 8, /* with CLOSE_ROOT: finish too if nothing but the head was written */
	CG_REQ_PARK = 16,      /* drain for a round hold (cg_writer_hold) */
	CG_REQ_WINDOW_END = 32, /* the capture window ends: the root span closes, nothing more */
};

/* What reaches the trace (capture window, fork child). */
enum cg_writer_gate {
	CG_GATE_OPEN,        /* every record */
	CG_GATE_FIRST_ALLOC, /* a fork child: its first own allocation brings the snapshot */
	CG_GATE_WINDOW,      /* before the window: only the live table is kept */
	CG_GATE_AFTER,       /* after it: the same, the trace done */
};

struct cg_encoder_ops;
struct cg_enc_end;

struct cg_writer_opts {
	const struct cg_encoder_ops *enc; /* the trace's encoder (encoding.h: cg_encoding_open) */
	const char *path; /* the trace's, for messages; it stays while the writer runs */
	bool stacks;      /* call stacks are recorded: the stack table is made for the trace */
	bool stats; /* CGPROBE_STATS: one line of the writer's costs at the end */
	uint8_t gate;    /* enum cg_writer_gate at the start */
	bool head_later; /* the head is written later (cg_writer_head_written): nothing goes out */
	bool keep_live;  /* a fork child: the live table it inherited stays */
	/*
	 * The figures the trace ends with (encoder.h), asked for when it ends
	 * (or execs), after the last drain; NULL: none.
	 */
	void (*end_figures)(struct cg_enc_end *v);
};

/* Starts the thread on an open output that already holds meta and s1. */
int cg_writer_start(struct cg_out *out, const struct cg_writer_opts *o);
/* Makes the writer drain now (cheap; safe from hooks). */
void cg_writer_wake(void);
/*
 * Asks for a request and waits up to timeout_ms for it to be done. Without
 * a running writer (never started, or after fork) does it on the caller's
 * thread. Returns 0, or -ETIMEDOUT.
 */
int cg_writer_request(int req, int timeout_ms);
/*
 * Another request finishes the trace (one a signal interrupted on this
 * thread): waits up to timeout_ms for the writer to have closed the file.
 * Async-signal-safe.
 */
void cg_writer_wait_finished(int timeout_ms);
/* A CG_REQ_DROP_EMPTY found the trace empty: the file is closed, the thread gone. */
bool cg_writer_dropped(void);
/*
 * Holds the writer still (park.h) until cg_writer_release(*ticket): for
 * CG_PARK_ROUND after it drained every ring, the caller may then work on
 * the writer's state; for CG_PARK_FORK where the live table and the rings
 * are whole, for a fork. 0 (also without a running writer: *ticket is
 * then 0), -EBUSY when another hold stayed, or -ETIMEDOUT (nothing held).
 */
int cg_writer_hold(enum cg_park_kind kind, int timeout_ms, uint32_t *ticket);
void cg_writer_release(uint32_t ticket);
/* Held for a round: the head went out, records may follow. */
void cg_writer_head_written(void);
/*
 * Held for a round: the capture window begins: the snapshot of what is live, marked
 * pre-existing at t=0, then every record, timed from base_ns (the session's clock,
 * read when the window began, before the snapshot).
 */
void cg_writer_window_begin(uint64_t base_ns);
/* In a fork child: the parent's writer thread does not exist here. */
void cg_writer_forget(void);

#endif

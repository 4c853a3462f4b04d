/* SPDX-License-Identifier: MIT */
/*
 * What the writer hands its encoder (writer.c): each event as a record of
 * the trace, once the writer has resolved what the event alone does not
 * say (its time on the trace's clock, a free's size and category from the
 * live table, a stack's trace id, a device's identity, the modules to
 * carry). Two encoders implement it: the compact encoding (compact_out.c,
 * which sends what its packed forms do not take as TEXT, formatted by
 * format.c) and JSONL (format.c); with CGPROBE_TEST_JSONL_COPY a tee
 * (encoding.c) calls both. The table is chosen once when a trace opens
 * (encoding.h), so the writer's loop calls through it and tests nothing
 * per event. Writer thread only, except where said.
 */
#ifndef CG_ENCODER_H
#define CG_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "record.h"

/* An alloc that went out as TEXT: its free cannot name it by ordinal. */
#define CG_ENC_NO_ORD UINT64_MAX

/*
 * A memory record's stack and modules (docs/stacks.md): the stack id (0:
 * none); on the record that defines it, a tree definition: the n_frames
 * frames it adds (else NULL), innermost first, on the stack parent (0:
 * none), defining stacks id - n_frames + 1 ... id; the modules to carry
 * (NULL: none). An encoder that could not define the stack sets refused;
 * the record then went out without it.
 */
struct cg_enc_stack {
	uint64_t id;
	uint64_t parent;
	const uint64_t *frames;
	uint32_t n_frames;
	uint32_t n_modules;
	const struct cg_modv *modules;
	/* The Python code objects its frames name, first met in this trace: they ride on it. */
	uint32_t n_py_codes;
	const struct cg_pycodev *py_codes;
	bool refused;
};

/* A device's identity as a DEV_INFO event brings it, for the device's first record. */
struct cg_device_ident {
	char *strings;        /* "uuid\0name\0", NULL when none is waiting */
	uint64_t total_bytes; /* 0 when unknown */
};

/* Where the encoder's time went, for CGPROBE_STATS; and its memory. */
struct cg_enc_stats {
	const char *name, *work; /* the encoding, and what its own CPU time is called */
	uint64_t records;        /* the writer's count, unless the encoder counts its own */
	uint64_t blocks, raw_bytes, compress_ns, write_ns;
	uint64_t resident; /* bytes of its buffers and tables resident now */
};

/*
 * The figures a trace ends with, which its head's meta record gets
 * (docs/probe.md, "The probe's own memory"): the process's peak resident
 * set, the probe's own resident bytes, and of those its stack tables'.
 */
struct cg_enc_end {
	uint64_t peak_rss, probe, stacks;
};

/*
 * ts is the record's time on the trace's clock (ns), e the event, with a
 * free's size and category those of the allocation it ends. id, when
 * set, is the device's identity, which goes on the record.
 */
struct cg_encoder_ops {
	/* A host heap allocation; returns the ordinal its free names (CG_ENC_NO_ORD: none). */
	uint64_t (*alloc)(const struct cg_event *e, uint64_t ts, struct cg_enc_stack *st);
	/* A host heap free of the allocation whose ordinal was ord. */
	void (*free)(const struct cg_event *e, uint64_t ts, uint64_t ord,
		     const struct cg_enc_stack *st);
	/* A device source's allocation (the device is e->step). */
	uint64_t (*device_alloc)(const struct cg_event *e, uint64_t ts, struct cg_enc_stack *st,
				 const struct cg_device_ident *id);
	/*
	 * A free of device memory: a device source's, or one of pinned memory
	 * through free() (e->kind CG_EV_FREE: op free).
	 */
	void (*device_free)(const struct cg_event *e, uint64_t ts, uint8_t device, uint64_t ord,
			    const struct cg_enc_stack *st, const struct cg_device_ident *id);
	/* A block live before recording began, in s1, `"cgprobe_preexisting":true`. */
	uint64_t (*preexisting)(uint64_t ts, uint64_t addr, uint64_t bytes, uint8_t device,
				uint8_t category, bool vmm, const struct cg_device_ident *id);
	/* A device_memory checkpoint of a device source, with the failed request of an OOM. */
	void (*device_memory)(const struct cg_event *e, uint64_t ts, const uint64_t *oom,
			      const struct cg_device_ident *id);
	/* A span start of thread tid; the writer frees the event's strings afterwards. */
	void (*span_start)(const struct cg_event *e, uint64_t ts, uint64_t tid);
	void (*span_end)(uint64_t span, uint64_t duration_ns);
	/* The annotation API's gradient and device checkpoint records (their blobs, event.h). */
	void (*gradient)(const struct cg_event *e);
	void (*checkpoint)(const struct cg_event *e, uint64_t ts);
	/* JSONL lines, each ending in a newline, as they are: the trace's head. Any thread. */
	void (*text)(const char *p, size_t n);
	/* The records that follow are thread tid's. */
	void (*thread)(uint64_t tid);

	/*
	 * Output. Between events: room() ends a block that the next items
	 * might overflow; block_due() says one should end, which end_block()
	 * does where a fork may go on (writer.c, outside_table), as
	 * write_out() writes the lines *full asked for.
	 */
	void (*room)(void);
	bool (*block_due)(void);
	void (*end_block)(void);
	void (*write_out)(void);
	/*
	 * A round's end: what is buffered is written, and with now (a request
	 * asked), or once a flush period has passed, reaches the file.
	 */
	void (*round_end)(bool now);
	/*
	 * Ends what is buffered and pushes it out: the head, on a thread
	 * holding the writer. The head stays where end_head can rewrite it.
	 */
	int (*flush)(void);
	/* The trace ends (or execs): the head's meta record gets the figures, in place. */
	void (*end_head)(const struct cg_enc_end *v);
	/* How long until round_end wants to run again (ns): at most CGPROBE_FLUSH_MS. */
	uint64_t (*due_in)(void);
	/* The trace is done: outputs of the encoder's own (the tee's copy) are closed. */
	void (*close)(void);
	void (*stats)(struct cg_enc_stats *s);
	/*
	 * Set once buffered lines passed their flush mark (JSONL): the writer
	 * reads it after each event, and calls write_out() where a fork may go
	 * on. Never set for an encoder that buffers nothing.
	 */
	const bool *full;
};

/*
 * The operations by name: an encoder with prefix p defines p_NAME for each
 * and fills its table with CG_ENCODER_TABLE(p, its full flag).
 */
#define CG_ENCODER_OPS(X, p)                                                                       \
	X(p, alloc) X(p, free) X(p, device_alloc) X(p, device_free) X(p, preexisting)              \
	X(p, device_memory) X(p, span_start) X(p, span_end) X(p, gradient) X(p, checkpoint)        \
	X(p, text) X(p, thread) X(p, room) X(p, block_due) X(p, end_block) X(p, write_out)         \
	X(p, round_end) X(p, flush) X(p, end_head) X(p, due_in) X(p, close) X(p, stats)
#define CG_ENCODER_OP_INIT(p, name) .name = p##_##name,
#define CG_ENCODER_TABLE(p, full_flag) {CG_ENCODER_OPS(CG_ENCODER_OP_INIT, p).full = (full_flag)}

#endif

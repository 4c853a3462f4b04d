/* SPDX-License-Identifier: MIT */
/*
 * The probe's configuration, read once from CGPROBE_* variables through one
 * table. A bad value gives one warning and its default; the program runs on.
 */
#ifndef CG_OPTIONS_H
#define CG_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

/* A trace's encoding: compact (docs/compact-format.md) or JSONL text. */
enum cg_format { CG_FORMAT_COMPACT, CG_FORMAT_JSONL };

/* A trace's name in a job's folder (CGPROBE_OUTPUT=DIR/), before its extension. */
#define CG_JOB_TRACE_NAME "cgprobe.%e.%h.%p"

/* CGPROBE_STACK_DEPTH's largest value: a hook keeps this many frames on the program's stack. */
#define CG_STACK_DEPTH_MAX 256
#define CG_STACK_DEPTH_MAX_TEXT "256"

struct cg_options {
	const char *output;         /* CGPROBE_OUTPUT template */
	bool job;                   /* CGPROBE_OUTPUT named a folder: a job's (docs/jobs.md) */
	uint64_t min_bytes;         /* CGPROBE_MIN_BYTES */
	const char *only;           /* CGPROBE_ONLY globs */
	bool follow;                /* CGPROBE_FOLLOW */
	uint64_t flush_ms;          /* CGPROBE_FLUSH_MS */
	const char *tags;           /* CGPROBE_TAGS k=v,k=v */
	const char *entrypoint;     /* CGPROBE_ENTRYPOINT */
	uint8_t phase;              /* CGPROBE_PHASE */
	uint64_t capture_step;      /* CGPROBE_CAPTURE_STEP */
	bool capture_update;        /* CGPROBE_CAPTURE=update: only update capture_step is recorded */
	const char *update_range;   /* CGPROBE_UPDATE_RANGE: globs naming an update's NVTX range */
	const char *correlation_id; /* CGPROBE_CORRELATION_ID */
	const char *device;         /* CGPROBE_DEVICE */
	const char *manifest;       /* CGPROBE_MANIFEST: the wrapper's list of traces */
	bool device_snapshots;      /* CGPROBE_DEVICE_SNAPSHOTS=alloc */
	uint8_t format;             /* CGPROBE_FORMAT: enum cg_format asked for */
	bool format_explicit;       /* CGPROBE_FORMAT was set (to a valid value) */
	uint8_t trace_format;       /* the encoding of the current trace (cg_options_format) */
	bool stats;                 /* CGPROBE_STATS: the writer's costs on stderr at exit */
	const char *test_jsonl_copy; /* CGPROBE_TEST_JSONL_COPY: tests only, see docs/probe.md */
	bool test_fork_timeout; /* CGPROBE_TEST_FORK_TIMEOUT: tests only, likewise */
	uint64_t stack_depth;        /* CGPROBE_STACK_DEPTH: frames per call stack, 0 = off */
	const char *steps;           /* CGPROBE_STEPS: range names to steps (stepmap.h) */
	uint8_t python;              /* CGPROBE_PYTHON: enum cg_python_mode */
	uint8_t clock; /* CGPROBE_CLOCK: enum cg_clock_mode; from a session's start, the one in use */
	uint8_t unwind; /* CGPROBE_UNWIND: enum cg_unwind_mode */
};

/* CGPROBE_PYTHON: Python frames in stacks where an interpreter runs (auto), asked for (on), never. */
enum cg_python_mode { CG_PYTHON_AUTO, CG_PYTHON_ON, CG_PYTHON_OFF };
/* Their names, as the variable and the meta tag spell them. */
extern const char *const cg_python_modes[3];

/*
 * CGPROBE_CLOCK: the TSC where the kernel's clock is the TSC (auto), or
 * clock_gettime always. The session's start settles it (clock.c): TSC or
 * MONOTONIC, the clock the events are stamped with.
 */
enum cg_clock_mode { CG_CLOCK_AUTO, CG_CLOCK_MONOTONIC, CG_CLOCK_TSC };
/* Their names, as the variable and the meta tag spell them. */
extern const char *const cg_clock_modes[3];

/*
 * CGPROBE_UNWIND: the fast unwinder, libunwind where it declines (auto);
 * libunwind always; or both, libunwind's stack kept where they differ and
 * the differences counted in CGPROBE_STATS's line (check).
 */
enum cg_unwind_mode { CG_UNWIND_AUTO, CG_UNWIND_LIBUNWIND, CG_UNWIND_CHECK };
extern const char *const cg_unwind_modes[3];

extern struct cg_options cg_opt;

/* Reads the environment; call once, before any thread of the probe runs. */
void cg_options_load(void);
/*
 * Each setting that changes what a trace records, as its meta tag
 * (cgprobe_min_bytes, cgprobe_device_snapshots) and value; always all of
 * them, defaults included.
 */
void cg_options_each_tag(void (*fn)(void *ctx, const char *key, const char *value), void *ctx);
/*
 * The encoding of a trace written to path (a character device or FIFO when
 * stream): a name ending .jsonl or .zst is JSONL whatever CGPROBE_FORMAT
 * says, a stream only compact when asked for by name, anything else as
 * CGPROBE_FORMAT (compact by default).
 */
enum cg_format cg_options_format(const char *path, bool stream);
/* CGPROBE_UPDATE_RANGE's default: PyTorch's profiler steps, the usual loop functions. */
#define CG_UPDATE_RANGE_DEFAULT "ProfilerStep#*,train_step,training_step,train_batch,optimizer_step"
/* Whether name matches one of the comma-separated shell globs (CGPROBE_ONLY, UPDATE_RANGE). */
bool cg_options_match(const char *globs, const char *name);
/* Whether the executable (by exe or argv[0] base name) matches CGPROBE_ONLY. */
bool cg_options_selected(const char *exe_name, const char *argv0_name);

#endif

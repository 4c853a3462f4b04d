/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto export's events (docs/perfetto.md): Chrome Trace Event
 * objects one a line, through a buffer written out every 64 KiB, so that
 * a file of millions of events never sits in memory whole.
 */
#ifndef CGTRACE_EXPORT_PERFETTO_OUT_H
#define CGTRACE_EXPORT_PERFETTO_OUT_H

#include <stdio.h>

#include "cli.h"

struct perfetto_out {
	FILE *f;
	struct cli_buf b;
	struct cli_jw w; /* into b */
	/*
	 * Added to the time of every event but the metadata ('M') ones: a
	 * process of a job, its trace's time 0 placed on the job's axis.
	 */
	uint64_t shift_ns;
};

/* Writes the buffer out when it holds 64 KiB, or whatever it holds when force. */
void perfetto_flush(struct perfetto_out *o, bool force);
/* A time or duration: microseconds with exactly three decimals, every nanosecond kept. */
void perfetto_key_us(struct cli_jw *w, const char *key, uint64_t ns);
/* Opens an event: {"ph":..,"pid":..,"tid":..,"ts":..,"name":..; the caller closes it. ts is shifted. */
void perfetto_event(struct perfetto_out *o, char ph, uint64_t pid, uint64_t tid, uint64_t ts,
                    const char *name);
/* Opens an instant event of scope "g" (global) or "p" (its process); the caller closes it. */
void perfetto_instant(struct perfetto_out *o, uint64_t pid, uint64_t ts, const char *name,
                      const char *scope);
/* An event's args: perfetto_args_begin opens them, perfetto_args_end closes them and the event. */
void perfetto_args_begin(struct cli_jw *w);
void perfetto_args_end(struct cli_jw *w);
/* A process_name or thread_name metadata event. */
void perfetto_name_event(struct perfetto_out *o, const char *what, uint64_t pid, uint64_t tid,
                         const char *name);
/* A process's process_sort_index. */
void perfetto_sort_event(struct perfetto_out *o, uint64_t pid, uint64_t index);

#endif

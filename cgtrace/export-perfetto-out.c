/* SPDX-License-Identifier: MIT */
/* The Perfetto export's events (export-perfetto-out.h). */
#include "export-perfetto-out.h"

void perfetto_flush(struct perfetto_out *o, bool force)
{
	if (o->b.err || (!force && o->b.len < (1u << 16)))
		return;
	fwrite(o->b.p, 1, o->b.len, o->f);
	o->b.len = 0;
}

void perfetto_key_us(struct cli_jw *w, const char *key, uint64_t ns)
{
	cli_jw_key(w, key);
	cli_jw_thousandths(w, ns);
}

void perfetto_event(struct perfetto_out *o, char ph, uint64_t pid, uint64_t tid, uint64_t ts,
                    const char *name)
{
	struct cli_jw *w = &o->w;
	perfetto_flush(o, false);
	cli_jw_newline(w);
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "ph", (const char[]){ph, '\0'});
	cli_jw_key_u64(w, "pid", pid);
	cli_jw_key_u64(w, "tid", tid);
	perfetto_key_us(w, "ts", ph == 'M' ? ts : ts + o->shift_ns);
	cli_jw_key_str(w, "name", name);
}

void perfetto_instant(struct perfetto_out *o, uint64_t pid, uint64_t ts, const char *name,
                      const char *scope)
{
	perfetto_event(o, 'i', pid, pid, ts, name);
	cli_jw_key_str(&o->w, "s", scope);
}

void perfetto_args_begin(struct cli_jw *w)
{
	cli_jw_key(w, "args");
	cli_jw_begin_object(w);
}

void perfetto_args_end(struct cli_jw *w)
{
	cli_jw_end_object(w);
	cli_jw_end_object(w);
}

void perfetto_name_event(struct perfetto_out *o, const char *what, uint64_t pid, uint64_t tid,
                         const char *name)
{
	perfetto_event(o, 'M', pid, tid, 0, what);
	perfetto_args_begin(&o->w);
	cli_jw_key_str(&o->w, "name", name);
	perfetto_args_end(&o->w);
}

void perfetto_sort_event(struct perfetto_out *o, uint64_t pid, uint64_t index)
{
	perfetto_event(o, 'M', pid, pid, 0, "process_sort_index");
	perfetto_args_begin(&o->w);
	cli_jw_key_u64(&o->w, "sort_index", index);
	perfetto_args_end(&o->w);
}

/* SPDX-License-Identifier: MIT */
#include "figures.h"

#include <errno.h>
#include <string.h>

#include "device_source.h"
#include "options.h"
#include "probe.h"
#include "py_codes.h"
#include "py_lines.h"
#include "stack_intern.h"

struct cg_figures cg_fig;

void cg_figures_new_trace(bool keep_live)
{
	if (!keep_live) {
		uint64_t mark = cg_fig.mark;
		memset(&cg_fig, 0, sizeof(cg_fig));
		/* Mark numbers go on across sessions: a caller's old mark never looks current. */
		cg_fig.mark = mark;
		return;
	}
	for (size_t i = 0; i < sizeof(cg_fig.dev) / sizeof(cg_fig.dev[0]); i++)
		cg_fig.dev[i].site = cg_fig.dev[i].kept_site = 0;
	cg_fig.raised = cg_fig.kept = 0;
}

uint64_t cg_figures_mark(void)
{
	for (size_t i = 0; i < sizeof(cg_fig.dev) / sizeof(cg_fig.dev[0]); i++) {
		struct cg_fig_dev *d = &cg_fig.dev[i];
		d->peak = d->at_mark = d->live;
		d->site = d->site_key = d->site_bytes = 0;
		d->kept_site = d->kept_key = d->kept_bytes = 0;
	}
	cg_fig.raised = cg_fig.kept = 0;
	return ++cg_fig.mark;
}

int cg_figures_device(const char *name)
{
	char n[32];
	for (int i = 0; i < 256; i++) {
		if (!cg_fig.dev[i].seen && i != CG_PROBE_HOST)
			continue;
		cg_device_name(n, (uint8_t)i);
		if (strcmp(n, name) == 0)
			return i;
	}
	return -ENOENT;
}

/* Appends s to buf (len bytes, used *at): false when it does not fit. */
static bool put(char *buf, size_t len, size_t *at, const char *s, size_t n)
{
	if (*at + n + 1 > len)
		return false;
	memcpy(buf + *at, s, n);
	*at += n;
	buf[*at] = '\0';
	return true;
}

int cg_figures_devices(char *buf, size_t len)
{
	char n[32];
	size_t at = 0;
	int count = 0;
	if (!buf || !len)
		return -EINVAL;
	buf[0] = '\0';
	/* The host is always there, first, as summary lists it. */
	for (int k = -1; k < 256; k++) {
		int i = k < 0 ? CG_PROBE_HOST : k;
		if (k >= 0 && (i == CG_PROBE_HOST || !cg_fig.dev[i].seen))
			continue;
		size_t nl = cg_device_name(n, (uint8_t)i);
		if ((count && !put(buf, len, &at, ",", 1)) || !put(buf, len, &at, n, nl))
			return -ENOSPC;
		count++;
	}
	return count;
}

/* s (n bytes) into out (cap bytes, NUL-terminated); its tail when it is longer. */
static void copy_tail(char *out, size_t cap, const char *s, size_t n)
{
	if (n >= cap) {
		s += n - (cap - 1);
		n = cap - 1;
	}
	memcpy(out, s, n);
	out[n] = '\0';
}

/* Python frame f (py_codes.h) as a site: false when it names no code object. */
static bool py_site(uint64_t f, struct cgprobe_memory_site *out)
{
	struct cg_py_code c;
	uint32_t id = (uint32_t)(f >> 32) & 0x7fffffffu;
	const char *why;
	if (!id || !cg_py_code_get(id, &c))
		return false;
	copy_tail(out->file, sizeof(out->file), c.file, c.file_len);
	if (c.qualname_len)
		copy_tail(out->function, sizeof(out->function), c.qualname, c.qualname_len);
	else
		copy_tail(out->function, sizeof(out->function), c.name, c.name_len);
	/* The table came out of the process: checked before a line is read from it. */
	int line = c.format && cg_py_lt_check((enum cg_py_lt)c.format, c.table, c.table_len,
					      &why) == 0
			   ? cg_py_lt_line((enum cg_py_lt)c.format, c.first_line, c.table,
					   c.table_len, (uint32_t)f)
			   : -1;
	/* As the reader names a frame (cgtrace_py_code_line). */
	out->line = line >= 0 ? line : c.first_line;
	return true;
}

int cg_figures_site(uint8_t device, bool kept, struct cgprobe_memory_site *out)
{
	uint64_t frames[CG_STACK_DEPTH_MAX]; /* a stack is as deep as its definition was */
	const struct cg_fig_dev *d = &cg_fig.dev[device];
	uint64_t id = !kept ? d->site : d->kept_key ? d->kept_site : 0;
	uint32_t n = id ? cg_intern_frames(id, frames, sizeof(frames) / sizeof(frames[0])) : 0;
	for (uint32_t i = 0; i < n; i++)
		if ((frames[i] & CG_PY_FRAME) && py_site(frames[i], out))
			return 0;
	return -ENOENT;
}

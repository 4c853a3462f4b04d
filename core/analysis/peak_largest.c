/* SPDX-License-Identifier: MIT */
/* The largest allocations live at the peak (peak_largest.h). */
#include "peak_largest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "memory_stream.h"
#include "op_groups.h"
#include "sat.h"

const char *cg_peak_entry_id(const struct cg_stream *s, uint32_t i, char buf[19])
{
	const struct cg_stream_entry *e = &s->ent[i];
	if (e->str)
		return e->str;
	if (s->pooled) {
		const char *id = cg_doc_str(s->doc, (uint32_t)e->key);
		return id ? id : "";
	}
	snprintf(buf, 19, "0x%" PRIx64, e->key);
	return buf;
}

/* a ranks after b in the breakdown: fewer bytes, or as many and a later tensor id. */
static bool after(const struct cg_stream *s, uint32_t a, uint32_t b)
{
	uint64_t x = s->ent[a].bytes, y = s->ent[b].bytes;
	if (x != y)
		return x < y;
	char ba[19], bb[19];
	return strcmp(cg_peak_entry_id(s, a, ba), cg_peak_entry_id(s, b, bb)) > 0;
}

/* A heap of the max kept so far, the one ranking last on top. */
static void sift_down(const struct cg_stream *s, uint32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && after(s, h[l], h[m]))
			m = l;
		if (r < n && after(s, h[r], h[m]))
			m = r;
		if (m == i)
			return;
		uint32_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void sift_up(const struct cg_stream *s, uint32_t *h, size_t i)
{
	while (i && after(s, h[i], h[(i - 1) / 2])) {
		uint32_t t = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/* Every entry at the peak counted into its op's group, kept in rep when some are left out. */
static int group_by_op(const struct cg_stream *s, struct cgtrace_memory_report *rep)
{
	struct cg_map by_op = {0};
	struct cgtrace_op_group *g = NULL;
	size_t n = 0, cap = 0;
	int r = 0;
	for (uint32_t i = 0; r == 0 && i < s->n_ent; i++) {
		const struct cg_stream_entry *e = &s->ent[i];
		if (!cg_stream_entry_at_peak(e))
			continue;
		uint32_t op = cg_doc_class(s->doc, e->cls)->op_name, pos = UINT32_MAX, k;
		if (!cg_map_next(&by_op, op, &pos, &k)) {
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				struct cgtrace_op_group *ng = realloc(g, cap * sizeof(*g));
				if (!ng) {
					r = -ENOMEM;
					break;
				}
				g = ng;
			}
			k = (uint32_t)n;
			g[n++] = (struct cgtrace_op_group){cg_doc_str(s->doc, op), 0, 0};
			r = cg_map_put(&by_op, op, k);
		}
		g[k].count++;
		g[k].bytes = cg_sat_add(g[k].bytes, e->bytes);
	}
	cg_map_free(&by_op);
	if (r < 0) {
		free(g);
		return r;
	}
	cg_op_groups_sort(g, n);
	rep->op_groups = g;
	rep->n_op_groups = n;
	return 0;
}

int cg_peak_largest(const struct cg_stream *s, size_t max, uint32_t **out, size_t *n_out,
		    struct cgtrace_memory_report *rep)
{
	size_t at_peak = 0;
	for (uint32_t i = 0; i < s->n_ent; i++)
		at_peak += cg_stream_entry_at_peak(&s->ent[i]);
	size_t keep = at_peak < max ? at_peak : max;
	uint32_t *h = malloc((keep ? keep : 1) * sizeof(*h));
	if (!h)
		return -ENOMEM;
	size_t n = 0;
	uint64_t total = 0;
	for (uint32_t i = 0; i < s->n_ent; i++) {
		if (!cg_stream_entry_at_peak(&s->ent[i]))
			continue;
		total = cg_sat_add(total, s->ent[i].bytes);
		if (n < keep) {
			h[n] = i;
			sift_up(s, h, n++);
		} else if (keep && after(s, h[0], i)) {
			h[0] = i;
			sift_down(s, h, n, 0);
		}
	}
	uint64_t kept = 0;
	for (size_t k = 0; k < n; k++)
		kept = cg_sat_add(kept, s->ent[h[k]].bytes);
	rep->n_at_peak = at_peak;
	rep->n_rest = at_peak - n;
	/* A saturated total leaves the rest's bytes saturated too. */
	rep->rest_bytes = total == UINT64_MAX ? UINT64_MAX : total - kept;
	int r = rep->n_rest ? group_by_op(s, rep) : 0;
	if (r < 0) {
		free(h);
		return r;
	}
	*out = h;
	*n_out = n;
	return 0;
}

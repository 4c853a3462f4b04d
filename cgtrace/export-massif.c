/* SPDX-License-Identifier: MIT */
/*
 * The massif export: one device of a view in valgrind massif's out-file
 * format, which ms_print and massif-visualizer read (docs/massif.md). The
 * snapshots are the highest buckets of about a hundred stretches of the
 * grid; the one at the device's peak is detailed: a tree of what was live
 * then, by call stack from the allocation site outwards when the trace has
 * stacks, else by op_name and span.
 */
#include "export-massif.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Massif's own threshold: a node under 1% of the snapshot is folded with its siblings. */
#define THRESHOLD_PERCENT 1

/* ---- snapshots ---- */

struct snap {
	uint64_t ns, bytes;
	bool peak;
};

/* The bucket of the device's peak, or n_buckets when it has none. */
static size_t peak_bucket(const struct cgtrace_view *v, const struct cgtrace_view_device *dev)
{
	if (!dev->peak_bytes || !v->n_buckets)
		return v->n_buckets;
	size_t b = cgtrace_view_bucket_of(v, dev->peak_ns);
	if (dev->buckets[b].max_bytes == dev->peak_bytes)
		return b;
	for (b = 0; b < v->n_buckets; b++)
		if (dev->buckets[b].max_bytes == dev->peak_bytes)
			return b;
	return v->n_buckets;
}

/*
 * Per stretch of the grid, its highest bucket (the peak's own in its
 * stretch): no peak is lost, as in the view. Time 0 comes first (nothing
 * recorded is live before the first record) and the end last.
 */
static size_t pick_snapshots(const struct cgtrace_view *v, const struct cgtrace_view_device *dev,
                             struct snap *out)
{
	size_t n = 0, pb = peak_bucket(v, dev);
	size_t step = (v->n_buckets + CLI_MASSIF_SNAPSHOTS - 1) / CLI_MASSIF_SNAPSHOTS;
	for (size_t a = 0; a < v->n_buckets; a += step) {
		size_t best = a;
		for (size_t i = a; i < a + step && i < v->n_buckets; i++)
			if (dev->buckets[i].max_bytes > dev->buckets[best].max_bytes)
				best = i;
		if (pb >= a && pb < a + step)
			best = pb;
		const struct cgtrace_view_bucket *bk = &dev->buckets[best];
		if (n == 0 && bk->max_ns > 0)
			out[n++] = (struct snap){0, 0, false};
		out[n++] = (struct snap){bk->max_ns, bk->max_bytes, best == pb};
		if (best == pb)
			out[n - 1] = (struct snap){dev->peak_ns, dev->peak_bytes, true};
	}
	if (n == 0)
		out[n++] = (struct snap){0, 0, false};
	const struct cgtrace_view_bucket *last =
	    v->n_buckets ? &dev->buckets[v->n_buckets - 1] : NULL;
	if (last && last->end_ns > out[n - 1].ns)
		out[n++] = (struct snap){last->end_ns, last->end_bytes, false};
	return n;
}

/* ---- the peak's tree ---- */

/* What was live at the peak: one allocation, or (rest) the bytes not kept one by one. */
struct item {
	uint64_t bytes;
	const struct cgtrace_resolved_stack *st; /* NULL: by op_name and span */
	const char *op_name, *span_id;
	bool rest;
};

/* A node's key at a depth of an item's path. */
enum key_kind { K_END, K_FRAME, K_OP, K_SPAN, K_REST };
struct key {
	enum key_kind kind;
	const struct cgtrace_frame *frame;
	const char *s;
};

static struct key key_at(const struct item *it, size_t depth)
{
	if (it->rest)
		return (struct key){depth ? K_END : K_REST, NULL, NULL};
	if (it->st)
		return depth < it->st->n_frames - it->st->site
		           ? (struct key){K_FRAME, it->st->frames[it->st->site + depth], NULL}
		           : (struct key){K_END, NULL, NULL};
	if (depth == 0)
		return (struct key){K_OP, NULL, it->op_name};
	return (struct key){depth == 1 ? K_SPAN : K_END, NULL, depth == 1 ? it->span_id : NULL};
}

static int str_cmp(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* Frames are told apart by address, as massif does; the names keep the order stable. */
static int key_cmp(const struct key *x, const struct key *y)
{
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind != K_FRAME)
		return str_cmp(x->s, y->s);
	const struct cgtrace_frame *f = x->frame, *g = y->frame;
	if (f->address != g->address)
		return f->address < g->address ? -1 : 1;
	int c = str_cmp(f->function, g->function);
	if (c)
		return c;
	return (f > g) - (f < g);
}

static size_t sort_depth;

static int item_cmp(const void *a, const void *b)
{
	struct key x = key_at(a, sort_depth), y = key_at(b, sort_depth);
	return key_cmp(&x, &y);
}

struct group {
	size_t at, n;
	uint64_t bytes;
	struct key key;
};

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return key_cmp(&x->key, &y->key);
}

struct tree {
	FILE *f;
	const struct cgtrace_view *view;
	uint64_t total; /* the snapshot's bytes, which the threshold is a part of */
	size_t kept;    /* rest: the view's max_allocs */
	bool has_stacks;
};

/* Labels are one line each; ms_print reads '#' as the start of a comment. */
static void put_clean(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '#' ? '_' : *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void put_label(const struct tree *t, const struct key *k)
{
	char buf[1024];
	const struct cgtrace_view_span *span;
	switch (k->kind) {
	case K_FRAME:
		fprintf(t->f, "0x%" PRIX64 ": ", k->frame->address);
		put_clean(t->f, cli_frame_name(buf, sizeof(buf), k->frame));
		if (k->frame->inlined)
			fputs(" [inlined]", t->f);
		break;
	case K_OP:
		put_clean(t->f, k->s ? k->s : "(no op_name)");
		if (t->has_stacks)
			fputs(" (no call stack)", t->f);
		break;
	case K_SPAN:
		span = cgtrace_view_find_span(t->view, k->s);
		fputs("in span ", t->f);
		put_clean(t->f, span ? span->name : "?");
		fputs(" (", t->f);
		put_clean(t->f, k->s ? k->s : "?");
		fputc(')', t->f);
		break;
	case K_REST:
		fprintf(t->f,
		        "(allocations not kept one by one: smaller than the trace's %zu largest)",
		        t->kept);
		break;
	case K_END:
		break;
	}
}

static bool significant(const struct tree *t, uint64_t bytes)
{
	return (double)bytes * 100 >= (double)t->total * THRESHOLD_PERCENT;
}

/*
 * One node and, below it, its children largest first, those under the
 * threshold folded into massif's "in N places" line. The node's label was
 * written by the caller (the line's start by this function).
 */
static int node(struct tree *t, struct item *it, size_t n, size_t depth, uint64_t bytes,
                const struct key *label)
{
	struct group *g = malloc((n ? n : 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	sort_depth = depth;
	qsort(it, n, sizeof(*it), item_cmp);
	size_t ng = 0;
	for (size_t i = 0, j; i < n; i = j) {
		struct key k = key_at(&it[i], depth), kj;
		uint64_t sum = 0;
		for (j = i; j < n && (kj = key_at(&it[j], depth), key_cmp(&k, &kj) == 0); j++)
			sum = sum + it[j].bytes < sum ? UINT64_MAX : sum + it[j].bytes;
		if (k.kind != K_END)
			g[ng++] = (struct group){i, j - i, sum, k};
	}
	qsort(g, ng, sizeof(*g), group_cmp);
	size_t sig = 0;
	uint64_t below = 0;
	for (size_t k = 0; k < ng; k++) {
		if (significant(t, g[k].bytes))
			sig++;
		else
			below += g[k].bytes;
	}
	fprintf(t->f, "%*sn%zu: %" PRIu64 " ", (int)depth, "", sig + (ng > sig), bytes);
	if (label)
		put_label(t, label);
	else
		fputs("(heap allocation functions) malloc/new/new[], cudaMalloc and the like",
		      t->f);
	fputc('\n', t->f);
	int ret = 0;
	for (size_t k = 0; k < sig && ret == 0; k++)
		ret = node(t, it + g[k].at, g[k].n, depth + 1, g[k].bytes, &g[k].key);
	if (ret == 0 && ng > sig)
		fprintf(t->f,
		        "%*sn0: %" PRIu64 " in %zu place%s, %sbelow massif's threshold (%d.00%%)\n",
		        (int)depth + 1, "", below, ng - sig, ng - sig > 1 ? "s" : "",
		        ng - sig > 1 ? "all " : "", THRESHOLD_PERCENT);
	free(g);
	return ret;
}

/* Where the peak's tree comes from. */
enum source { FROM_BREAKDOWN, FROM_ALLOCS };

/*
 * What was live at the device's peak: the report's breakdown when the
 * device holds the trace's global peak (every allocation live then), else
 * the view's largest allocations live at that instant and the rest as one
 * item. *n_items 0: no tree.
 */
static int peak_items(const struct cgtrace_view *v, size_t d, struct cli_sites *sites,
                      struct item **out, size_t *n_items, enum source *src)
{
	const struct cgtrace_view_device *dev = &v->devices[d];
	const struct cgtrace_memory_report *rep = v->report;
	bool global = rep && rep->n_breakdown && strcmp(rep->peak_device, dev->device) == 0 &&
	              rep->peak_bytes == dev->peak_bytes;
	size_t cap = (global ? rep->n_breakdown : v->n_allocs) + 1;
	struct item *it = calloc(cap, sizeof(*it));
	if (!it)
		return -ENOMEM;
	size_t n = 0;
	uint64_t sum = 0;
	for (size_t i = 0; global && i < rep->n_breakdown; i++) {
		const struct cgtrace_live_alloc *a = &rep->peak_breakdown[i];
		if (strcmp(a->device, dev->device) == 0)
			it[n++] = (struct item){a->bytes,
			                        sites ? cli_sites_stack(sites, a->stack_id) : NULL,
			                        a->op_name, a->span_id, false};
	}
	for (size_t i = 0; !global && i < v->n_allocs; i++) {
		const struct cgtrace_view_alloc *a = &v->allocs[i];
		if (a->device == d && v->alloc_live[i].at_peak)
			it[n++] = (struct item){a->bytes,
			                        sites ? cli_sites_stack(sites, a->stack_id) : NULL,
			                        a->op_name, a->span_id, false};
	}
	for (size_t i = 0; i < n; i++) {
		/* A stack with no frame past the allocator says nothing: by op_name then. */
		if (it[i].st && it[i].st->site >= it[i].st->n_frames)
			it[i].st = NULL;
		sum = sum + it[i].bytes < sum ? UINT64_MAX : sum + it[i].bytes;
	}
	if (sum > dev->peak_bytes) {
		/* Timestamps tied at the peak: nothing here can be more than the peak. */
		n = 0;
		sum = 0;
	}
	if (sum < dev->peak_bytes)
		it[n++] = (struct item){.bytes = dev->peak_bytes - sum, .rest = true};
	*out = it;
	*n_items = dev->peak_bytes ? n : 0;
	*src = global ? FROM_BREAKDOWN : FROM_ALLOCS;
	return 0;
}

/* ---- the file ---- */

static void put_time(FILE *f, uint64_t ns)
{
	fprintf(f, "time=%" PRIu64 ".%06" PRIu64 "\n", ns / 1000000, ns % 1000000);
}

static void header(FILE *f, const struct cgtrace_view *v, const struct cgtrace_view_device *dev,
                   enum source src, bool has_stacks)
{
	struct cgtrace_meta m = {0};
	if (v->doc)
		cgtrace_doc_meta(v->doc, &m);
	char b[32], t[32];
	fputs("desc: cgprobe trace", f);
	if (m.run_id) {
		fputc(' ', f);
		put_clean(f, m.run_id);
	}
	if (!dev) {
		fputs(", no memory records\n", f);
	} else {
		fputs(", device ", f);
		put_clean(f, dev->device);
		fprintf(f, ", live bytes; peak %s at %s; detailed peak: ",
		        cli_bytes(b, dev->peak_bytes, false), cli_ns(t, dev->peak_ns));
		if (src == FROM_BREAKDOWN)
			fputs("every allocation live then", f);
		else
			fprintf(
			    f,
			    "the trace's %zu largest allocations live then, the rest as one node",
			    v->n_allocs);
		fprintf(f, ", by %s\n", has_stacks ? "call stack" : "op_name and span");
	}
	const char *cmd = v->doc ? cli_tag(v->doc, "cmdline") : NULL;
	fputs("cmd: ", f);
	put_clean(f, cmd ? cmd : m.entrypoint ? m.entrypoint : "(unknown)");
	fputs("\ntime_unit: ms\n", f);
}

int cli_massif_write(FILE *f, const struct cgtrace_view *v, size_t d, struct cli_sites *sites)
{
	const struct cgtrace_view_device *dev = d < v->n_devices ? &v->devices[d] : NULL;
	struct snap *snaps = calloc(CLI_MASSIF_SNAPSHOTS + 3, sizeof(*snaps));
	struct item *items = NULL;
	size_t n_items = 0, n_snaps = 1;
	enum source src = FROM_BREAKDOWN;
	bool has_stacks = v->doc && cgtrace_doc_stack_count(v->doc) > 0 && sites;
	int ret = snaps ? 0 : -ENOMEM;
	if (ret == 0 && dev) {
		n_snaps = pick_snapshots(v, dev, snaps);
		ret = peak_items(v, d, has_stacks ? sites : NULL, &items, &n_items, &src);
	}
	if (ret == 0)
		header(f, v, dev, src, has_stacks);
	for (size_t i = 0; ret == 0 && i < n_snaps; i++) {
		const struct snap *s = &snaps[i];
		fprintf(f, "#-----------\nsnapshot=%zu\n#-----------\n", i);
		put_time(f, s->ns);
		fprintf(f, "mem_heap_B=%" PRIu64 "\nmem_heap_extra_B=0\nmem_stacks_B=0\n",
		        s->bytes);
		if (!s->peak || !n_items) {
			fputs(s->peak ? "heap_tree=peak\n" : "heap_tree=empty\n", f);
			if (s->peak)
				fprintf(f,
				        "n0: %" PRIu64 " (heap allocation functions) "
				        "malloc/new/new[], cudaMalloc and the like\n",
				        s->bytes);
			continue;
		}
		fputs("heap_tree=peak\n", f);
		struct tree t = {f, v, s->bytes, v->n_allocs, has_stacks};
		ret = node(&t, items, n_items, 0, s->bytes, NULL);
	}
	free(items);
	free(snaps);
	return ret;
}

static size_t find_device(const struct cgtrace_view *v, const char *name)
{
	for (size_t d = 0; d < v->n_devices; d++)
		if (strcmp(v->devices[d].device, name) == 0)
			return d;
	return v->n_devices;
}

int cli_export_massif(const char *path, const char *output, const char *device)
{
	struct cli_out o;
	if (cli_out_open(&o, output) != CLI_OK)
		return CLI_FAIL;
	/* More allocations one by one than a plot draws: a device's peak tree rests on them. */
	struct cgtrace_view_options vo = {.max_allocs = 5000};
	struct cgtrace_view *v = cli_view_load(path, &vo, 0);
	struct cli_sites sites;
	bool attached = false;
	int ret = v ? 0 : -EINVAL;
	size_t d = 0;
	if (v) {
		const char *want = device ? device : v->report ? v->report->peak_device : "";
		d = find_device(v, want);
		/* No peak (only frees of unknown blocks): the first device, as good as any. */
		if (d == v->n_devices && !device)
			d = 0;
		if (d == v->n_devices && device) {
			fprintf(stderr, "%s: no memory records on device '%s'\n", cli_path_name(path), want);
			ret = -ENOENT;
		}
	}
	if (ret == 0 && v->doc && cgtrace_doc_stack_count(v->doc) > 0) {
		attached = cli_sites_attach(&sites, v->doc, path) == CLI_OK;
		ret = attached ? 0 : -EINVAL;
	}
	if (ret == 0) {
		ret = cli_massif_write(o.f, v, d, attached ? &sites : NULL);
		if (ret < 0)
			fprintf(stderr, "%s: %s\n", cli_path_name(path), strerror(-ret));
	}
	int status = cli_out_close(&o, ret == 0);
	if (attached) {
		/* The document is the view's: sites only borrowed it. */
		sites.owns_doc = false;
		cli_sites_close(&sites);
	}
	cgtrace_view_free(v);
	return ret < 0 ? CLI_FAIL : status;
}

/* SPDX-License-Identifier: MIT */
/*
 * A job's rows of top and leaks. A row is what the command prints: the
 * site's name, or the stack's frames as printed, on a kind of device
 * (cpu, cuda), so the same line of code in eight ranks is one row
 * whatever each rank's addresses and device numbers are. Each process is
 * read on a pool thread (its document, its rows, its stacks resolved),
 * then folded in path order: the strings and frames it adds are copied,
 * and its document goes. A row's frames as shown (their addresses) are
 * those of its process, or the first process with it; the strings of the
 * frames as printed are the rows' keys, shared by every process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli-pool.h"
#include "job-sites.h"

#define FNV0 0xcbf29ce484222325ull

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

/* Open addressing over entries whose hashes sit in an array beside them: index + 1, 0 empty. */
struct index {
	uint32_t *slot;
	size_t cap;
};

/* Room for the n + 1st entry: the slots doubled (1024 at first) past half full. */
static int index_room(struct index *x, const uint64_t *hash, size_t n)
{
	if ((n + 1) * 2 <= x->cap)
		return 0;
	size_t cap = x->cap ? x->cap * 2 : 1024;
	uint32_t *slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t j = hash[i] & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(x->slot);
	*x = (struct index){slot, cap};
	return 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 256;
	while (c < need)
		c *= 2;
	void *n = realloc(*p, c * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

struct row {
	struct cli_job_row r;
	uint32_t family, name, device; /* string ids: cpu, the site, cuda:1 */
	size_t owner;                  /* by process its process, else SIZE_MAX */
	size_t last;                   /* the last process counted in r.n_processes */
	uint32_t *keys;   /* by stack: the frames as printed, string ids */
	uint32_t *frames; /* the frames shown, ids of copies */
	size_t n_frames;
	bool has_frames;
	bool mixed; /* r.device is the family's "cuda:*" */
};

struct cli_job_table {
	const struct cli_job_sites_opts *o;
	struct cli_job_sites *js;
	char *const *paths;
	bool failed, oom; /* a trace could not be read; memory ran out */
	/* Every string once: names, devices, a frame's line as printed and its parts. */
	char **str;
	uint64_t *str_hash;
	size_t n_str, cap_str;
	struct index str_ix;
	/* The frames the rows show, each once, strings interned: only the rows' own processes'. */
	struct cgtrace_frame *frames;
	uint64_t *frame_hash;
	size_t n_frames, cap_frames;
	struct index frame_ix;
	struct row *rows;
	uint64_t *row_hash;
	size_t n_rows, cap_rows;
	struct index row_ix;
	uint32_t *scratch, *scratch_copy; /* one stack's frames: their lines, their copies */
	size_t cap_scratch, cap_scratch_copy;
	struct cgtrace_resolved_stack *stacks; /* one per row once folded */
	const struct cgtrace_frame **frame_ptrs;
};

/* The string's id, copied when new; -ENOMEM. */
static long str_id(struct cli_job_table *t, const char *s)
{
	uint64_t h = fnv(s, strlen(s), FNV0);
	if (index_room(&t->str_ix, t->str_hash, t->n_str) < 0)
		return -ENOMEM;
	size_t mask = t->str_ix.cap - 1, j = h & mask;
	for (; t->str_ix.slot[j]; j = (j + 1) & mask) {
		size_t k = t->str_ix.slot[j] - 1;
		if (t->str_hash[k] == h && strcmp(t->str[k], s) == 0)
			return (long)k;
	}
	size_t cap = t->cap_str;
	if (grow((void **)&t->str, &cap, t->n_str + 1, sizeof(*t->str)) < 0)
		return -ENOMEM;
	if (grow((void **)&t->str_hash, &t->cap_str, t->n_str + 1, sizeof(*t->str_hash)) < 0)
		return -ENOMEM;
	char *copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	t->str[t->n_str] = copy;
	t->str_hash[t->n_str] = h;
	t->str_ix.slot[j] = (uint32_t)++t->n_str;
	return (long)t->n_str - 1;
}

/* s interned, or NULL kept; false when memory ran out. */
static bool str_ptr(struct cli_job_table *t, const char **s)
{
	if (!*s)
		return true;
	long id = str_id(t, *s);
	if (id < 0)
		return false;
	*s = t->str[id];
	return true;
}

/* The line a frame prints as: its key among the processes' frames. */
static long line_id(struct cli_job_table *t, const struct cgtrace_frame *f)
{
	char name[600], line[640];
	snprintf(line, sizeof(line), "%s%s", cli_frame_name(name, sizeof(name), f),
		 f->inlined ? " [inlined]" : "");
	return str_id(t, line);
}

static bool same_frame(const struct cgtrace_frame *a, const struct cgtrace_frame *b)
{
	return a->address == b->address && a->function == b->function && a->file == b->file &&
	       a->line == b->line && a->module == b->module && a->offset == b->offset &&
	       a->inlined == b->inlined;
}

/* A copy of f, its strings interned, kept once however many rows show it; -ENOMEM. */
static long frame_copy(struct cli_job_table *t, const struct cgtrace_frame *f)
{
	struct cgtrace_frame c = *f;
	if (!str_ptr(t, &c.function) || !str_ptr(t, &c.file) || !str_ptr(t, &c.module))
		return -ENOMEM;
	/* Interned strings are equal when their pointers are. */
	uint64_t h = fnv(&c.address, sizeof(c.address), FNV0);
	h = fnv(&c.function, sizeof(c.function), h);
	h = fnv(&c.module, sizeof(c.module), h);
	h = fnv(&c.offset, sizeof(c.offset), h);
	if (index_room(&t->frame_ix, t->frame_hash, t->n_frames) < 0)
		return -ENOMEM;
	size_t mask = t->frame_ix.cap - 1, j = h & mask;
	for (; t->frame_ix.slot[j]; j = (j + 1) & mask) {
		size_t k = t->frame_ix.slot[j] - 1;
		if (t->frame_hash[k] == h && same_frame(&t->frames[k], &c))
			return (long)k;
	}
	size_t cap = t->cap_frames;
	if (grow((void **)&t->frames, &cap, t->n_frames + 1, sizeof(*t->frames)) < 0 ||
	    grow((void **)&t->frame_hash, &t->cap_frames, t->n_frames + 1,
		 sizeof(*t->frame_hash)) < 0)
		return -ENOMEM;
	t->frames[t->n_frames] = c;
	t->frame_hash[t->n_frames] = h;
	t->frame_ix.slot[j] = (uint32_t)++t->n_frames;
	return (long)t->n_frames - 1;
}

/*
 * The frames r's stack prints: their lines' ids in t->scratch and, with
 * copies, the frames themselves in t->scratch_copy. The count, or -ENOMEM.
 */
static long frames_of(struct cli_job_table *t, struct cli_sites *s, const struct cli_site_row *r,
		      bool copies)
{
	const struct cgtrace_resolved_stack *st =
	    r->site == &cli_site_preexisting ? NULL : cli_sites_stack(s, r->stack_id);
	size_t n = 0;
	for (size_t i = st && !t->o->full ? st->site : 0; st && i < st->n_frames; i++) {
		if (!cli_frame_shown(st, i, t->o->full))
			continue;
		long id = line_id(t, st->frames[i]), copy = copies ? frame_copy(t, st->frames[i]) : 0;
		if (id < 0 || copy < 0 ||
		    grow((void **)&t->scratch, &t->cap_scratch, n + 1, sizeof(*t->scratch)) < 0 ||
		    grow((void **)&t->scratch_copy, &t->cap_scratch_copy, n + 1,
			 sizeof(*t->scratch_copy)) < 0)
			return -ENOMEM;
		t->scratch[n] = (uint32_t)id;
		t->scratch_copy[n++] = (uint32_t)copy;
	}
	return (long)n;
}

static bool same_key(const struct cli_job_table *t, const struct row *x, const struct row *k)
{
	if (x->family != k->family || x->owner != k->owner)
		return false;
	if (!t->o->by_stack)
		return x->name == k->name;
	return x->r.preexisting == k->r.preexisting && x->n_frames == k->n_frames &&
	       !memcmp(x->keys, k->keys, k->n_frames * sizeof(*k->keys));
}

/* A row of a process's that is new to the job: its strings and frames copied. */
static int row_new(struct cli_job_table *t, struct row *k, struct cli_sites *s,
		   const struct cli_site_row *r, size_t proc)
{
	k->has_frames = t->o->by_stack || t->o->frames;
	long n = k->has_frames ? frames_of(t, s, r, true) : 0;
	if (n < 0)
		return (int)n;
	k->n_frames = (size_t)n;
	k->keys = NULL;
	k->frames = NULL;
	if (k->n_frames) {
		size_t bytes = k->n_frames * sizeof(*k->frames);
		k->frames = malloc(bytes);
		k->keys = t->o->by_stack ? malloc(bytes) : NULL;
		if (!k->frames || (t->o->by_stack && !k->keys)) {
			free(k->frames);
			free(k->keys);
			return -ENOMEM;
		}
		memcpy(k->frames, t->scratch_copy, bytes);
		if (k->keys)
			memcpy(k->keys, t->scratch, bytes);
	}
	k->r = (struct cli_job_row){
	    .device = t->str[k->device],
	    .site = t->str[k->name],
	    .preexisting = r->site == &cli_site_preexisting,
	    .sum = r->sum,
	    .n_stacks = r->n_stacks,
	    .n_processes = 1,
	    .process = proc,
	    .stack_id = r->stack_id,
	};
	k->last = proc;
	size_t cap = t->cap_rows;
	if (grow((void **)&t->rows, &cap, t->n_rows + 1, sizeof(*t->rows)) < 0 ||
	    grow((void **)&t->row_hash, &t->cap_rows, t->n_rows + 1, sizeof(*t->row_hash)) < 0) {
		free(k->frames);
		free(k->keys);
		return -ENOMEM;
	}
	t->rows[t->n_rows] = *k;
	return 0;
}

/* Counts one row of process proc in the job's row of the same key. */
static int fold_row(struct cli_job_table *t, struct cli_sites *s, const struct cli_site_row *r,
		    size_t proc)
{
	char name[600], family[64];
	struct row k = {.owner = t->o->by_process ? proc : SIZE_MAX};
	snprintf(family, sizeof(family), "%.*s", (int)strcspn(r->device, ":"), r->device);
	long nm = str_id(t, cli_frame_name(name, sizeof(name), r->site));
	long fm = str_id(t, family), dv = str_id(t, r->device);
	if (nm < 0 || fm < 0 || dv < 0)
		return -ENOMEM;
	k.name = (uint32_t)nm;
	k.family = (uint32_t)fm;
	k.device = (uint32_t)dv;
	k.r.preexisting = r->site == &cli_site_preexisting;
	uint64_t h = fnv(&k.family, sizeof(k.family), FNV0);
	h = fnv(&k.owner, sizeof(k.owner), h);
	if (t->o->by_stack) {
		long n = frames_of(t, s, r, false);
		if (n < 0)
			return (int)n;
		k.keys = t->scratch;
		k.n_frames = (size_t)n;
		h = fnv(t->scratch, k.n_frames * sizeof(*t->scratch), h);
		h = fnv(&k.r.preexisting, sizeof(k.r.preexisting), h);
	} else {
		h = fnv(&k.name, sizeof(k.name), h);
	}
	if (index_room(&t->row_ix, t->row_hash, t->n_rows) < 0)
		return -ENOMEM;
	size_t mask = t->row_ix.cap - 1, j = h & mask;
	for (; t->row_ix.slot[j]; j = (j + 1) & mask) {
		struct row *x = &t->rows[t->row_ix.slot[j] - 1];
		if (t->row_hash[t->row_ix.slot[j] - 1] != h || !same_key(t, x, &k))
			continue;
		cli_stat_add(&x->r.sum, &r->sum);
		x->r.n_stacks += r->n_stacks;
		if (x->last != proc) {
			x->r.n_processes++;
			x->last = proc;
		}
		/* Ranks on cuda:0 and cuda:1 make one row on cuda:*. */
		if (x->device != k.device && !x->mixed) {
			char mixed[80];
			snprintf(mixed, sizeof(mixed), "%s:*", t->str[x->family]);
			long id = str_id(t, mixed);
			if (id < 0)
				return -ENOMEM;
			x->r.device = t->str[id];
			x->mixed = true;
		}
		return 0;
	}
	int ret = row_new(t, &k, s, r, proc);
	if (ret < 0)
		return ret;
	t->row_hash[t->n_rows] = h;
	t->row_ix.slot[j] = (uint32_t)++t->n_rows;
	return 0;
}

/* ---- reading the processes ---- */

struct proc_state {
	struct cli_sites s;
	char line[2048]; /* the read's error, or its warning */
	struct cgtrace_process process;
	struct cli_site_row *rows;
	size_t n_rows, n_fold;
};

static int proc_read(void *user, size_t i, void **out)
{
	struct cli_job_table *t = user;
	struct proc_state *st = calloc(1, sizeof(*st));
	struct cgtrace_doc *doc = NULL;
	*out = st;
	if (!st)
		return -ENOMEM;
	const char *path = t->paths[i];
	if (cgtrace_doc_read_flags(path, NULL, CGTRACE_READ_STREAM_MEMORY, &doc, st->line,
				   sizeof(st->line)) < 0)
		return CLI_FAIL;
	if (cli_sites_attach(&st->s, doc, path) != CLI_OK) {
		cgtrace_doc_free(doc);
		return CLI_FAIL;
	}
	st->s.owns_doc = true;
	if (cgtrace_doc_process(doc, &st->process) < 0)
		st->process = (struct cgtrace_process){.pid = -1, .ppid = -1, .forked_from = -1,
						       .rank = -1};
	if (cli_site_rows(&st->s, t->o->device, t->o->by_stack, t->o->by, &st->rows, &st->n_rows) <
	    0) {
		snprintf(st->line, sizeof(st->line), "%s: out of memory", cli_path_name(path));
		return CLI_FAIL;
	}
	st->n_fold = t->o->by_process && t->o->keep && t->o->keep < st->n_rows ? t->o->keep
										 : st->n_rows;
	/* The stacks printed are the rows' keys: resolved here, on this thread. */
	for (size_t r = 0; t->o->by_stack && r < st->n_fold; r++)
		cli_sites_stack(&st->s, st->rows[r].stack_id);
	return CLI_OK;
}

static void proc_free(struct proc_state *st)
{
	if (!st)
		return;
	free(st->rows);
	cli_sites_close(&st->s);
	free(st);
}

static void proc_fold(void *user, size_t i, void *state, int status)
{
	struct cli_job_table *t = user;
	struct proc_state *st = state;
	struct cli_job_proc *p = &t->js->procs[i];
	p->path = t->paths[i];
	if (st && st->line[0])
		fprintf(stderr, "%s\n", st->line);
	if (status != CLI_OK || t->oom) {
		if (!st)
			fprintf(stderr, "%s: out of memory\n", cli_path_name(p->path));
		t->failed |= status != CLI_OK;
		proc_free(st);
		return;
	}
	const struct cgtrace_process *x = &st->process;
	p->process = (struct cgtrace_process){.pid = x->pid, .ppid = x->ppid,
					      .forked_from = x->forked_from, .rank = x->rank,
					      .local_rank = x->local_rank,
					      .world_size = x->world_size, .host = "",
					      .executable = "", .cmdline = "", .boot_id = ""};
	p->read = true;
	t->js->n_read++;
	t->js->n_total += st->n_rows;
	for (size_t r = st->n_fold; r < st->n_rows; r++)
		cli_stat_add(&t->js->rest, &st->rows[r].sum);
	for (size_t r = 0; r < st->n_fold; r++)
		if (fold_row(t, &st->s, &st->rows[r], i) < 0) {
			fprintf(stderr, "%s: out of memory\n", cli_path_name(p->path));
			t->oom = true;
			break;
		}
	proc_free(st);
}

/* ---- ranking ---- */

struct ranked {
	const struct row *row;
	const struct cli_job_sites_opts *o;
};

/*
 * The largest first; ties by the site's name (by stack: the first process
 * with the row, its stack), the device, the process, so the order does not
 * depend on the threads.
 */
static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	const struct cli_job_row *u = &x->row->r, *v = &y->row->r;
	uint64_t p = cli_by_value(&u->sum, x->o->by), q = cli_by_value(&v->sum, x->o->by);
	if (p != q)
		return p > q ? -1 : 1;
	int c = x->o->by_stack ? 0 : strcmp(u->site, v->site);
	if (!c && x->o->by_stack && (u->process != v->process || u->stack_id != v->stack_id))
		c = u->process != v->process ? (u->process < v->process ? -1 : 1)
					     : (u->stack_id < v->stack_id ? -1 : 1);
	if (!c)
		c = strcmp(u->device, v->device);
	if (!c && u->process != v->process)
		c = u->process < v->process ? -1 : 1;
	return c;
}

/* The rows' frames as stacks, then the rows ranked into js. */
static int finish(struct cli_job_table *t)
{
	size_t n = t->n_rows, total = 0;
	for (size_t i = 0; i < n; i++)
		total += t->rows[i].n_frames;
	t->stacks = calloc(n ? n : 1, sizeof(*t->stacks));
	t->frame_ptrs = calloc(total ? total : 1, sizeof(*t->frame_ptrs));
	struct ranked *k = calloc(n ? n : 1, sizeof(*k));
	struct cli_job_row *out = calloc(n ? n : 1, sizeof(*out));
	if (!t->stacks || !t->frame_ptrs || !k || !out) {
		free(k);
		free(out);
		return -ENOMEM;
	}
	const struct cgtrace_frame **at = t->frame_ptrs;
	for (size_t i = 0; i < n; i++) {
		struct row *r = &t->rows[i];
		for (size_t f = 0; f < r->n_frames; f++)
			at[f] = &t->frames[r->frames[f]];
		t->stacks[i] = (struct cgtrace_resolved_stack){at, r->n_frames, 0};
		r->r.stack = r->has_frames ? &t->stacks[i] : NULL;
		at += r->n_frames;
		k[i] = (struct ranked){r, t->o};
	}
	qsort(k, n, sizeof(*k), ranked_cmp);
	for (size_t i = 0; i < n; i++)
		out[i] = k[i].row->r;
	free(k);
	t->js->rows = out;
	t->js->n_rows = n;
	if (!t->o->by_process)
		t->js->n_total = n;
	return 0;
}

int cli_job_sites_read(struct cli_job_sites *js, char *const *paths, size_t n,
		       const struct cli_job_sites_opts *o)
{
	*js = (struct cli_job_sites){0};
	struct cli_job_table *t = calloc(1, sizeof(*t));
	js->procs = calloc(n ? n : 1, sizeof(*js->procs));
	js->table = t;
	if (!t || !js->procs) {
		fprintf(stderr, "cgtrace: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	js->n_procs = n;
	*t = (struct cli_job_table){.o = o, .js = js, .paths = paths};
	static const struct cli_pool_ops ops = {proc_read, proc_fold};
	cli_pool_run(n, o->jobs, &ops, t);
	if (!t->oom && finish(t) < 0) {
		fprintf(stderr, "cgtrace: %s\n", strerror(ENOMEM));
		t->oom = true;
	}
	return t->oom ? -ENOMEM : t->failed ? CLI_FAIL : CLI_OK;
}

void cli_job_sites_free(struct cli_job_sites *js)
{
	struct cli_job_table *t = js->table;
	if (t) {
		for (size_t i = 0; i < t->n_str; i++)
			free(t->str[i]);
		for (size_t i = 0; i < t->n_rows; i++) {
			free(t->rows[i].frames);
			free(t->rows[i].keys);
		}
		free(t->str);
		free(t->str_hash);
		free(t->str_ix.slot);
		free(t->frames);
		free(t->frame_hash);
		free(t->frame_ix.slot);
		free(t->rows);
		free(t->row_hash);
		free(t->row_ix.slot);
		free(t->scratch);
		free(t->scratch_copy);
		free(t->stacks);
		free(t->frame_ptrs);
		free(t);
	}
	free(js->procs);
	free(js->rows);
	*js = (struct cli_job_sites){0};
}

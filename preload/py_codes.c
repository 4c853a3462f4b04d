/* SPDX-License-Identifier: MIT */
#include "py_codes.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "cpu_relax.h"

/*
 * Entries by open addressing on the code object's address, a quarter of
 * a million at most (a framework meets tens of thousands); their copies
 * in an arena beside. Both are reserved once and touched as they fill.
 */
#define SLOTS (1u << 18)
#define FILL_MAX (SLOTS / 4 * 3)
#define ARENA_BYTES (64u << 20)
/* A name, a file name: cut beyond this (the copy says where). */
#define STR_MAX 1024u
/* A line table longer than this (a function of thousands of lines) is not copied. */
#define TABLE_MAX (256u << 10)

enum { EMPTY, CLAIMED, READY, FAILED };

struct slot {
	_Atomic uint64_t key; /* the code object's address, 0: empty */
	uint64_t fingerprint;
	_Atomic uint32_t state;
	uint32_t copy;    /* offset of its struct copy in the arena */
	uint32_t written; /* the writer's trace number when it was last written */
	uint32_t id;
};

struct copy {
	int32_t first_line;
	uint8_t format;
	uint8_t pad[3];
	uint32_t name_len, qualname_len, file_len, table_len;
	char data[]; /* name, qualname, file, table */
};

static struct slot *slots;
static unsigned char *arena;
static _Atomic uint32_t arena_used = 8; /* offset 0 is no copy */
static _Atomic uint32_t n_ids;
/* The slot of each id (1-based), for the writer. */
static _Atomic uint32_t *slot_of_id;
static uint32_t trace_no = 1;

bool cg_py_codes_setup(void)
{
	size_t len = SLOTS * sizeof(struct slot) + (FILL_MAX + 1) * sizeof(uint32_t) + ARENA_BYTES;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (p == MAP_FAILED)
		return false;
	slots = p;
	slot_of_id = (_Atomic uint32_t *)(slots + SLOTS);
	arena = (unsigned char *)(slot_of_id + FILL_MAX + 1);
	return true;
}

static uint32_t arena_take(uint32_t n)
{
	n = (n + 7u) & ~7u;
	uint32_t at = atomic_fetch_add_explicit(&arena_used, n, memory_order_relaxed);
	return at + (uint64_t)n <= ARENA_BYTES ? at : 0;
}

/* The copy of src into the arena: 0 when there is no room. */
static uint32_t copy_in(const struct cg_py_code_src *src, cg_py_str_fn str, cg_py_bytes_fn bytes)
{
	char name[STR_MAX], qual[STR_MAX], file[STR_MAX];
	uint32_t nn = str(src->name, name, STR_MAX);
	uint32_t nq = src->qualname ? str(src->qualname, qual, STR_MAX) : 0;
	uint32_t nf = str(src->file, file, STR_MAX);
	const uint8_t *t = NULL;
	uint32_t nt = src->table ? bytes(src->table, &t) : 0;
	if (nt > TABLE_MAX)
		nt = 0;
	uint32_t at = arena_take((uint32_t)sizeof(struct copy) + nn + nq + nf + nt);
	if (!at)
		return 0;
	struct copy *c = (struct copy *)(arena + at);
	c->first_line = src->first_line;
	c->format = nt ? src->format : 0;
	c->name_len = nn;
	c->qualname_len = nq;
	c->file_len = nf;
	c->table_len = nt;
	memcpy(c->data, name, nn);
	memcpy(c->data + nn, qual, nq);
	memcpy(c->data + nn + nq, file, nf);
	if (nt)
		memcpy(c->data + nn + nq + nf, t, nt);
	return at;
}

/* The state once the thread that claimed s is done (READY or FAILED); CLAIMED past the bound. */
static uint32_t wait_final(struct slot *s)
{
	/* That thread copies a few hundred bytes; past the bound the frame is unreadable here. */
	for (unsigned spin = 0; spin < (1u << 20); spin++) {
		uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
		if (st == READY || st == FAILED)
			return st;
		cg_cpu_relax();
	}
	return CLAIMED;
}

uint32_t cg_py_code_id(const struct cg_py_code_src *src, uint64_t fingerprint, cg_py_str_fn str,
		       cg_py_bytes_fn bytes)
{
	if (!slots)
		return 0;
	uint64_t key = (uint64_t)(uintptr_t)src->code;
	uint64_t h = (key ^ fingerprint) * 0x9e3779b97f4a7c15ull;
	for (uint32_t i = (uint32_t)(h >> 46), probes = 0; probes < SLOTS; i++, probes++) {
		struct slot *s = &slots[i & (SLOTS - 1)];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
		if (k == 0) {
			uint64_t zero = 0;
			if (!atomic_compare_exchange_strong(&s->key, &zero, key)) {
				k = zero;
				goto taken;
			}
			s->fingerprint = fingerprint;
			uint32_t id = atomic_fetch_add(&n_ids, 1) + 1;
			uint32_t at = id <= FILL_MAX ? copy_in(src, str, bytes) : 0;
			if (!at) {
				atomic_store_explicit(&s->state, FAILED, memory_order_release);
				return 0;
			}
			s->copy = at;
			s->id = id;
			atomic_store_explicit(&slot_of_id[id], (uint32_t)(s - slots) + 1,
					      memory_order_release);
			atomic_store_explicit(&s->state, READY, memory_order_release);
			return id;
		}
	taken:
		if (k != key)
			continue;
		/* The fingerprint is written before the state is final. */
		uint32_t st = wait_final(s);
		if (st == CLAIMED)
			return 0;
		if (s->fingerprint != fingerprint)
			continue; /* another code object that lived at this address */
		return st == READY ? s->id : 0;
	}
	return 0;
}

bool cg_py_code_get(uint32_t id, struct cg_py_code *out)
{
	if (!slots || !id || id > FILL_MAX)
		return false;
	uint32_t si = atomic_load_explicit(&slot_of_id[id], memory_order_acquire);
	if (!si)
		return false;
	const struct slot *s = &slots[si - 1];
	const struct copy *c = (const struct copy *)(arena + s->copy);
	*out = (struct cg_py_code){
	    .id = id,
	    .first_line = c->first_line,
	    .format = c->format,
	    .name = c->data,
	    .name_len = c->name_len,
	    .qualname = c->data + c->name_len,
	    .qualname_len = c->qualname_len,
	    .file = c->data + c->name_len + c->qualname_len,
	    .file_len = c->file_len,
	    .table = (const uint8_t *)c->data + c->name_len + c->qualname_len + c->file_len,
	    .table_len = c->table_len,
	};
	return true;
}

bool cg_py_code_first_use(uint32_t id)
{
	if (!slots || !id || id > FILL_MAX)
		return false;
	uint32_t si = atomic_load_explicit(&slot_of_id[id], memory_order_acquire);
	if (!si)
		return false;
	struct slot *s = &slots[si - 1];
	if (s->written == trace_no)
		return false;
	s->written = trace_no;
	return true;
}

void cg_py_codes_new_trace(void)
{
	trace_no++;
}

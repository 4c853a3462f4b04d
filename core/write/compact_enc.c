/* SPDX-License-Identifier: MIT */
/*
 * The compact encoder (docs/compact-format.md). Items are written straight
 * into the block buffer through a cursor; a block buffer has
 * CG_CENC_HEADROOM bytes past block_raw, so a hot item needs one bound
 * check (may the block take it?) and no capacity check.
 */
#include "compact_enc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#define ZSTD_STATIC_LINKING_ONLY /* the static context, which never allocates */
#include <zstd.h>

#include "buf.h"
#include "compact_format.h"
#include "compact_live.h"
#include "crc32.h"
#include "fmt_num.h"
#include "hash.h"
#include "jsonl_format.h"
#include "names.h"
#include "num_scan.h"
#include "resident.h"
#include "varint.h"

/* The most a hot item takes, a THREAD item before it included. */
#define HOT_MAX 96
#define BLOCK_RAW_LIMIT (64u << 20)
#define HIST_MASK (CG_COMPACT_HISTORY - 1)
/* The address -> history position table: direct-mapped, four slots per history entry. */
#define SEEN_BITS 14
#define INDEX_MIN 1024u


#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

struct str_ent {
	uint32_t off, len, hash;
};

struct cls_ent {
	uint32_t span, op, device, hash;
	uint8_t category, flags;
};

/* An open-addressing index of id + 1 (0: empty) over entries that keep their hash. */
struct index {
	uint32_t *slot;
	uint32_t mask;
};

struct cg_cenc {
	struct cg_cenc_opts o;
	int err;
	/* The block: its header's room, then the raw items. */
	uint8_t *blk, *raw, *w, *lim, *end;
	size_t raw_cap;
	uint8_t *zout;
	size_t zcap;
	ZSTD_CCtx *z;
	void *zws;
	/* Block state. */
	uint64_t prev_ts, prev_addr, blk_tid;
	/* The threads this block's THREAD items named, in order: THREAD_AGAIN names them by number. */
	uint64_t blk_threads[CG_CF_BLOCK_THREADS];
	unsigned n_blk_threads;
	uint64_t blk_first_ord;
	/* The thread of what follows, written before the next record when it changed. */
	uint64_t tid;
	/*
	 * A STACK or MODULE item is written and the packed record that takes
	 * it is not yet: that record must not ride as TEXT (docs/stacks.md).
	 */
	bool pending;
	/*
	 * The stack block being built (docs/stacks.md): STACK and TREE items
	 * go to blocks of their own, so that a reader that keeps no stacks
	 * skips them unread; one goes out before the record block whose
	 * records take its items. Its buffer: the block header's room, the
	 * ids' range, then the items.
	 */
	uint8_t *sblk, *sraw, *sw, *slim;
	size_t s_cap;
	uint64_t s_first, s_last;
	/* Stack items since the record block began: a reader holds them pending until then. */
	uint32_t blk_stacks;
	uint64_t next_ord;
	/* The addresses of the packed memory records, by ordinal: the block's history. */
	uint64_t hist[CG_COMPACT_HISTORY];
	/*
	 * An address's last ordinal (its low 32 bits), by a hash of the
	 * address; an entry counts only when hist confirms it, so stale ones
	 * (an earlier block's, overwritten, wrapped) cost a miss, never a
	 * wrong ref, and the table needs no reset.
	 */
	uint32_t seen[1u << SEEN_BITS];
	/* Per field: ~0 keeps the values, 0 ablates them. */
	uint64_t keep[CG_CENC_F_COUNT];
	bool lean; /* opts' lean, and nothing ablated */
	/* Tables. */
	char *sbytes;
	size_t sbytes_len;
	struct str_ent *str;
	uint32_t nstr;
	struct index sidx;
	struct cls_ent *cls;
	uint32_t ncls;
	struct index cidx;
	/* The hot calls' TEXT: a buffer the formatter's bound always fits. */
	struct cg_buf hot;
	struct cg_buf text;
	struct cg_clive live; /* cg_cenc_rec's, with each alloc's ordinal */
	struct cg_cenc_stats st;
};

#define STAT(e, f, n) ((e)->st.f += (uint64_t)(n))
#define KEEP(e, f) ((e)->keep[CG_CENC_F_##f])
/*
 * The same in the item writers below, where lean (a constant after
 * inlining: the hot calls are made twice) drops both: the probe has no use
 * for per-field counts or ablation, and they cost it a fifth of the
 * encoder's instructions per record.
 */
#define STAT_L(e, f, n) ((void)(lean || ((e)->st.f += (uint64_t)(n), 0)))
#define KEEP_L(e, f) (lean ? ~0ull : KEEP(e, f))

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */

/* Address space only: pages come as the tables fill them. */
static void *reserve(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void unreserve(void *p, size_t n)
{
	if (p)
		munmap(p, n);
}

#define SBYTES_RESERVE ((size_t)CG_CENC_STRING_BYTES)
#define STR_RESERVE ((size_t)CG_CENC_STRINGS_MAX * sizeof(struct str_ent))
#define CLS_RESERVE ((size_t)CG_CENC_CLASSES_MAX * sizeof(struct cls_ent))
/* Indexes stay at most half full. */
#define SIDX_RESERVE ((size_t)CG_CENC_STRINGS_MAX * 2 * sizeof(uint32_t))
#define CIDX_RESERVE ((size_t)CG_CENC_CLASSES_MAX * 2 * sizeof(uint32_t))

/* The formatter's bound of a memory line whose strings are table strings. */
#define HOT_TEXT_MAX (1024 + 8 * CG_JSON_STR_MAX(CG_CENC_STRING_LEN_MAX))
#define CG_CENC_HEADROOM (HOT_TEXT_MAX + HOT_MAX + 2 * CG_VARINT_MAX)
/* The longest STACK or TREE item: opcode, id, parent, count, frames. */
#define STACK_ITEM_MAX (1 + 3 * CG_VARINT_MAX + CG_STACK_FRAMES_MAX * CG_VARINT_MAX)
/* What goes before a block's compressed bytes: its header, and a stack block's range. */
#define ZOUT_HEAD (CG_COMPACT_BLOCK_HEADER_LEN + CG_CF_STACKS_HEAD_LEN)
/* A reader holds at most this many stack items pending (docs/stacks.md). */
#define PENDING_STACKS_MAX 65536u

/* ------------------------------------------------------------------ */
/* Blocks                                                              */
/* ------------------------------------------------------------------ */

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void block_header(uint8_t *h, uint8_t type, uint32_t payload, uint32_t raw, const uint8_t *p)
{
	h[0] = type;
	h[1] = h[2] = h[3] = 0;
	put_u32(h + 4, payload);
	put_u32(h + 8, raw);
	put_u32(h + 12, cg_crc32(0, p, payload));
}

static void emit(struct cg_cenc *e, const void *p, size_t n)
{
	if (!e->err)
		e->err = e->o.write(e->o.user, p, n);
	if (!e->err)
		e->st.stored_bytes += n;
}

static void block_reset(struct cg_cenc *e)
{
	e->w = e->raw;
	e->prev_ts = 0;
	e->prev_addr = 0;
	e->blk_tid = 0;
	e->n_blk_threads = 0;
	e->blk_first_ord = e->next_ord;
	e->blk_stacks = 0;
}

static void put_u64(uint8_t *p, uint64_t v)
{
	put_u32(p, (uint32_t)v);
	put_u32(p + 4, (uint32_t)(v >> 32));
}

/* The stack block out, compressed where that saves bytes: its range, then its items. */
static void __attribute__((noinline)) end_stack_block(struct cg_cenc *e)
{
	size_t raw = (size_t)(e->sw - e->sraw);
	if (raw == 0)
		return;
	const size_t head = CG_COMPACT_BLOCK_HEADER_LEN, range = CG_CF_STACKS_HEAD_LEN;
	bool stored = true;
	if (e->z) {
		size_t zn = ZSTD_compress2(e->z, e->zout + head + range, e->zcap, e->sraw, raw);
		if (!ZSTD_isError(zn) && zn < raw) {
			put_u64(e->zout + head, e->s_first);
			put_u64(e->zout + head + 8, e->s_last);
			block_header(e->zout, CG_CF_BLOCK_STACKS_ZSTD, (uint32_t)(range + zn),
			             (uint32_t)raw, e->zout + head);
			emit(e, e->zout, head + range + zn);
			stored = false;
		}
	}
	if (stored) {
		put_u64(e->sblk + head, e->s_first);
		put_u64(e->sblk + head + 8, e->s_last);
		block_header(e->sblk, CG_CF_BLOCK_STACKS_STORED, (uint32_t)(range + raw),
		             (uint32_t)raw, e->sblk + head);
		emit(e, e->sblk, head + range + raw);
	}
	e->st.blocks++;
	e->st.raw_bytes += raw;
	e->sw = e->sraw;
}

static void __attribute__((noinline)) end_block_as(struct cg_cenc *e, bool store)
{
	/* Before the records that take its items. */
	end_stack_block(e);
	size_t raw = (size_t)(e->w - e->raw);
	if (raw == 0)
		return;
	bool stored = true;
	if (e->z && !store) {
		size_t zn = ZSTD_compress2(e->z, e->zout + CG_COMPACT_BLOCK_HEADER_LEN, e->zcap,
					   e->raw, raw);
		if (!ZSTD_isError(zn) && zn < raw) {
			uint8_t *p = e->zout + CG_COMPACT_BLOCK_HEADER_LEN;
			block_header(e->zout, 'Z', (uint32_t)zn, (uint32_t)raw, p);
			emit(e, e->zout, CG_COMPACT_BLOCK_HEADER_LEN + zn);
			stored = false;
		}
	}
	if (stored) {
		block_header(e->blk, 'R', (uint32_t)raw, (uint32_t)raw, e->raw);
		emit(e, e->blk, CG_COMPACT_BLOCK_HEADER_LEN + raw);
	}
	e->st.blocks++;
	e->st.raw_bytes += raw;
	block_reset(e);
}

static void end_block(struct cg_cenc *e)
{
	end_block_as(e, false);
}

/* Room for a hot item: the block ends first when it could pass block_raw. */
static inline uint8_t *hot_room(struct cg_cenc *e)
{
	if (unlikely(e->w + HOT_MAX > e->lim) && e->w > e->raw)
		end_block(e);
	return e->w;
}

/*
 * Room for an item of n bytes: the block ends first when it would pass
 * block_raw; an item longer than the headroom grows the buffer (export
 * only: the probe's items stay within it).
 */
static uint8_t *room(struct cg_cenc *e, size_t n)
{
	if (e->w + n > e->lim && e->w > e->raw)
		end_block(e);
	if (e->w + n <= e->end)
		return e->w;
	if (n > BLOCK_RAW_LIMIT)
		return NULL;
	size_t cap = e->o.block_raw + n + HOT_MAX;
	size_t zcap = ZSTD_compressBound(cap);
	uint8_t *blk = malloc(CG_COMPACT_BLOCK_HEADER_LEN + cap);
	uint8_t *zout = e->z ? malloc(ZOUT_HEAD + zcap) : NULL;
	if (!blk || (e->z && !zout)) {
		free(blk);
		free(zout);
		return NULL;
	}
	free(e->blk);
	e->blk = blk;
	e->raw = blk + CG_COMPACT_BLOCK_HEADER_LEN;
	e->w = e->raw;
	e->lim = e->raw + e->o.block_raw;
	e->end = e->raw + cap;
	e->raw_cap = cap;
	if (e->z) {
		free(e->zout);
		e->zout = zout;
		e->zcap = zcap;
	}
	return e->w;
}

/*
 * A thread change: its number in the block when a THREAD item named it
 * before (one byte: with threads allocating at once, the writer switches
 * between them every few records, and a tid's varint with its opcode was
 * a sixth of a 2-thread trace's raw bytes), else a THREAD item.
 */
static uint8_t *put_thread_change(struct cg_cenc *e, uint8_t *w, bool lean)
{
	uint8_t *w0 = w;
	unsigned i = 0;
	while (i < e->n_blk_threads && e->blk_threads[i] != e->tid)
		i++;
	if (i < e->n_blk_threads) {
		*w++ = (uint8_t)(CG_CF_OP_THREAD_AGAIN + i);
	} else {
		*w++ = CG_CF_OP_THREAD;
		w = cg_varint_put(w, e->tid & KEEP_L(e, thread));
		if (e->n_blk_threads < CG_CF_BLOCK_THREADS)
			e->blk_threads[e->n_blk_threads++] = e->tid;
	}
	STAT_L(e, thread, w - w0);
	e->blk_tid = e->tid;
	return w;
}

/* The file's first record names its thread too, once a thread is set. */
static inline uint8_t *put_thread(struct cg_cenc *e, uint8_t *w, bool lean)
{
	if (likely(e->tid == e->blk_tid))
		return w;
	return put_thread_change(e, w, lean);
}

/* ------------------------------------------------------------------ */
/* Life                                                                */
/* ------------------------------------------------------------------ */

static int write_file_header(struct cg_cenc *e)
{
	uint8_t h[CG_COMPACT_HEADER_LEN] = {0x89, 'C', 'G', 'T', 'R', 'A', 'C', 'E'};
	put_u32(h + 8, 1);
	put_u32(h + 12, e->o.flags);
	emit(e, h, sizeof(h));
	return e->err;
}

/*
 * zstd's parameters for a level, in one place. The blocks are varints with
 * few repeats: at level 1 nearly all of the saving is the literals'
 * Huffman coding (negative levels, which skip it, store 100% of the raw
 * bytes). On bench/alloc-bench's blocks (2 threads, 1M operations each,
 * 5.6 raw bytes a record) level 1 stores 81.8% in about 6.1 ns a record;
 * a smaller or larger hashLog (10 to 16), windowLog 17, minMatch 7 or
 * blocks cut to 256 KiB changed neither; minMatch 4 stores 77.9% in
 * 3.5 times the time; fast with targetLength 8 and literals forced to
 * Huffman saved 4% of the time at the same size here, but would lose the
 * matches of programs that repeat themselves, so the level's own
 * parameters stay.
 */
static ZSTD_compressionParameters zstd_params(int level, size_t block)
{
	return ZSTD_getCParams(level, block, 0);
}

static int zstd_init(struct cg_cenc *e)
{
	ZSTD_compressionParameters cp = zstd_params(e->o.zstd_level, e->raw_cap);
	size_t ws = ZSTD_estimateCCtxSize_usingCParams(cp);
	e->zws = malloc(ws);
	e->zcap = ZSTD_compressBound(e->raw_cap);
	e->zout = malloc(ZOUT_HEAD + e->zcap);
	if (!e->zws || !e->zout)
		return -ENOMEM;
	e->z = ZSTD_initStaticCCtx(e->zws, ws);
	if (!e->z)
		return -ENOMEM;
	size_t r = ZSTD_CCtx_setParameter(e->z, ZSTD_c_compressionLevel, e->o.zstd_level);
	const struct {
		ZSTD_cParameter p;
		int v;
	} set[] = {
	    {ZSTD_c_windowLog, (int)cp.windowLog},   {ZSTD_c_hashLog, (int)cp.hashLog},
	    {ZSTD_c_chainLog, (int)cp.chainLog},     {ZSTD_c_searchLog, (int)cp.searchLog},
	    {ZSTD_c_minMatch, (int)cp.minMatch},     {ZSTD_c_targetLength, (int)cp.targetLength},
	    {ZSTD_c_strategy, (int)cp.strategy},
	};
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]) && !ZSTD_isError(r); i++)
		r = ZSTD_CCtx_setParameter(e->z, set[i].p, set[i].v);
	return ZSTD_isError(r) ? -EINVAL : 0;
}

int cg_cenc_new(struct cg_cenc **out, const struct cg_cenc_opts *opts)
{
	*out = NULL;
	if (!opts->write)
		return -EINVAL;
	struct cg_cenc *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->o = *opts;
	e->live.keep_aux = true; /* each alloc's ordinal, which its free refers to */
	if (!e->o.block_raw)
		e->o.block_raw = CG_COMPACT_BLOCK_RAW;
	if (e->o.block_raw > BLOCK_RAW_LIMIT - CG_CENC_HEADROOM)
		e->o.block_raw = BLOCK_RAW_LIMIT - CG_CENC_HEADROOM;
	for (int f = 0; f < CG_CENC_F_COUNT; f++)
		e->keep[f] = f + 1 == e->o.ablate ? 0 : ~0ull;
	e->lean = e->o.lean && !e->o.ablate;
	int ret = 0;
	e->raw_cap = e->o.block_raw + CG_CENC_HEADROOM;
	e->blk = malloc(CG_COMPACT_BLOCK_HEADER_LEN + e->raw_cap);
	e->s_cap = e->o.block_raw + STACK_ITEM_MAX;
	e->sblk = malloc(ZOUT_HEAD + e->s_cap);
	e->hot.p = malloc(HOT_TEXT_MAX);
	e->hot.cap = HOT_TEXT_MAX;
	e->sbytes = reserve(SBYTES_RESERVE);
	e->str = reserve(STR_RESERVE);
	e->sidx.slot = reserve(SIDX_RESERVE);
	e->cls = reserve(CLS_RESERVE);
	e->cidx.slot = reserve(CIDX_RESERVE);
	e->sidx.mask = e->cidx.mask = INDEX_MIN - 1;
	if (!e->blk || !e->sblk || !e->hot.p || !e->sbytes || !e->str || !e->sidx.slot || !e->cls ||
	    !e->cidx.slot)
		ret = -ENOMEM;
	e->raw = e->blk + CG_COMPACT_BLOCK_HEADER_LEN;
	e->lim = e->raw + e->o.block_raw;
	e->end = e->raw + e->raw_cap;
	e->sraw = e->sw = e->sblk ? e->sblk + ZOUT_HEAD : NULL;
	e->slim = e->sraw ? e->sraw + e->o.block_raw : NULL;
	block_reset(e);
	if (ret == 0 && e->o.zstd_level != 0)
		ret = zstd_init(e);
	if (ret == 0)
		ret = write_file_header(e);
	if (ret < 0) {
		e->o.write = NULL;
		cg_cenc_close(e);
		return ret;
	}
	*out = e;
	return 0;
}

int cg_cenc_flush(struct cg_cenc *e)
{
	end_block(e);
	return e->err;
}

int cg_cenc_flush_stored(struct cg_cenc *e)
{
	end_block_as(e, true);
	return e->err;
}

size_t cg_cenc_resident(const struct cg_cenc *e)
{
	size_t n = cg_resident(e, sizeof(*e)) +
		   cg_resident(e->blk, CG_COMPACT_BLOCK_HEADER_LEN + e->raw_cap) +
		   cg_resident(e->sblk, ZOUT_HEAD + e->s_cap) +
		   cg_resident(e->hot.p, e->hot.cap) + cg_resident(e->sbytes, SBYTES_RESERVE) +
		   cg_resident(e->str, STR_RESERVE) + cg_resident(e->sidx.slot, SIDX_RESERVE) +
		   cg_resident(e->cls, CLS_RESERVE) + cg_resident(e->cidx.slot, CIDX_RESERVE);
	if (e->z)
		n += cg_resident(e->zws, ZSTD_estimateCCtxSize_usingCParams(zstd_params(
					     e->o.zstd_level, e->raw_cap))) +
		     cg_resident(e->zout, CG_COMPACT_BLOCK_HEADER_LEN + e->zcap);
	return n;
}

int cg_cenc_close(struct cg_cenc *e)
{
	if (!e)
		return 0;
	int ret = e->o.write ? cg_cenc_flush(e) : 0;
	free(e->blk);
	free(e->sblk);
	free(e->zout);
	free(e->zws);
	free(e->hot.p);
	cg_buf_fini(&e->text);
	cg_clive_fini(&e->live);
	unreserve(e->sbytes, SBYTES_RESERVE);
	unreserve(e->str, STR_RESERVE);
	unreserve(e->sidx.slot, SIDX_RESERVE);
	unreserve(e->cls, CLS_RESERVE);
	unreserve(e->cidx.slot, CIDX_RESERVE);
	free(e);
	return ret;
}

size_t cg_cenc_pending(const struct cg_cenc *e)
{
	return (size_t)(e->w - e->raw);
}

size_t cg_cenc_stacks_pending(const struct cg_cenc *e)
{
	return (size_t)(e->sw - e->sraw);
}

int cg_cenc_flush_stacks(struct cg_cenc *e)
{
	end_stack_block(e);
	return e->err;
}

void cg_cenc_stats(const struct cg_cenc *e, struct cg_cenc_stats *out)
{
	*out = e->st;
	out->raw_bytes += (uint64_t)(e->w - e->raw) + (uint64_t)(e->sw - e->sraw);
}

/* ------------------------------------------------------------------ */
/* Tables                                                              */
/* ------------------------------------------------------------------ */

/* Doubles an index in place once half full: only the pages in use are touched. */
static void index_grow(struct index *x, uint32_t n, const void *ents, size_t size, size_t hash_off)
{
	if ((n + 1) * 2 <= x->mask + 1)
		return;
	x->mask = x->mask * 2 + 1;
	memset(x->slot, 0, ((size_t)x->mask + 1) * sizeof(uint32_t));
	for (uint32_t id = 0; id < n; id++) {
		uint32_t h;
		memcpy(&h, (const char *)ents + id * size + hash_off, sizeof(h));
		uint32_t i = h & x->mask;
		while (x->slot[i])
			i = (i + 1) & x->mask;
		x->slot[i] = id + 1;
	}
}

uint32_t cg_cenc_string(struct cg_cenc *e, const char *s, size_t n)
{
	if (n > CG_CENC_STRING_LEN_MAX)
		return CG_CENC_NONE;
	uint32_t h = cg_hash_bytes(s, n);
	uint32_t i = h & e->sidx.mask;
	for (uint32_t id; (id = e->sidx.slot[i]); i = (i + 1) & e->sidx.mask) {
		const struct str_ent *x = &e->str[id - 1];
		if (x->hash == h && x->len == n && memcmp(e->sbytes + x->off, s, n) == 0)
			return id - 1;
	}
	if (e->nstr == CG_CENC_STRINGS_MAX || e->sbytes_len + n > SBYTES_RESERVE)
		return CG_CENC_NONE;
	uint8_t *w = room(e, 1 + CG_VARINT_MAX + n);
	if (!w)
		return CG_CENC_NONE;
	uint32_t id = e->nstr++;
	e->str[id] = (struct str_ent){(uint32_t)e->sbytes_len, (uint32_t)n, h};
	memcpy(e->sbytes + e->sbytes_len, s, n);
	e->sbytes_len += n;
	e->sidx.slot[i] = id + 1;
	index_grow(&e->sidx, e->nstr, e->str, sizeof(*e->str), offsetof(struct str_ent, hash));
	uint8_t *w0 = w;
	*w++ = CG_CF_OP_STRING;
	size_t kept = KEEP(e, tables) ? n : 0;
	w = cg_varint_put(w, kept);
	memcpy(w, s, kept);
	w += kept;
	STAT(e, tables, w - w0);
	e->w = w;
	return id;
}

static uint32_t cls_hash(uint32_t span, uint32_t op, uint32_t device, uint8_t cat, uint8_t flags)
{
	uint64_t k = (uint64_t)span << 32 | op;
	k ^= cg_hash_mix64((uint64_t)device << 16 | (uint64_t)cat << 8 | flags);
	uint32_t h = (uint32_t)cg_hash_mix64(k);
	return h ? h : 1;
}

uint32_t cg_cenc_class(struct cg_cenc *e, uint32_t span, uint32_t op, uint32_t device,
		       uint8_t category, uint8_t flags)
{
	if (span >= e->nstr || device >= e->nstr || (op != UINT32_MAX && op >= e->nstr) ||
	    category >= CGTRACE_CAT_COUNT || (flags & ~(CG_CLASS_MANAGED | CG_CLASS_VMM)))
		return CG_CENC_NONE;
	uint32_t h = cls_hash(span, op, device, category, flags);
	uint32_t i = h & e->cidx.mask;
	for (uint32_t id; (id = e->cidx.slot[i]); i = (i + 1) & e->cidx.mask) {
		const struct cls_ent *x = &e->cls[id - 1];
		if (x->hash == h && x->span == span && x->op == op && x->device == device &&
		    x->category == category && x->flags == flags)
			return id - 1;
	}
	if (e->ncls == CG_CENC_CLASSES_MAX)
		return CG_CENC_NONE;
	uint8_t *w = hot_room(e);
	uint32_t id = e->ncls++;
	e->cls[id] = (struct cls_ent){span, op, device, h, category, flags};
	e->cidx.slot[i] = id + 1;
	index_grow(&e->cidx, e->ncls, e->cls, sizeof(*e->cls), offsetof(struct cls_ent, hash));
	uint64_t k = KEEP(e, tables);
	uint8_t *w0 = w;
	*w++ = CG_CF_OP_CLASS;
	w = cg_varint_put(w, span & k);
	w = cg_varint_put(w, (op == UINT32_MAX ? 0 : (uint64_t)op + 1) & k);
	w = cg_varint_put(w, device & k);
	*w++ = (uint8_t)(category & k);
	*w++ = (uint8_t)(flags & k);
	STAT(e, tables, w - w0);
	e->w = w;
	return id;
}

void cg_cenc_thread(struct cg_cenc *e, uint64_t tid)
{
	e->tid = tid;
}

/* ------------------------------------------------------------------ */
/* TEXT                                                                */
/* ------------------------------------------------------------------ */

/*
 * An item's opcode byte, and a packed record's timestamp delta: every item
 * starts so. The ablation of --stats writes CG_CF_OP_MEMORY for an opcode it
 * drops, any constant would do.
 */
static inline uint8_t *put_op(struct cg_cenc *e, uint8_t *w, uint8_t op, bool lean)
{
	*w++ = KEEP_L(e, opcode) ? op : CG_CF_OP_MEMORY;
	STAT_L(e, opcode, 1);
	return w;
}

static inline uint8_t *put_ts(struct cg_cenc *e, uint8_t *w, uint64_t ts, bool lean)
{
	uint8_t *w0 = w;
	w = cg_varint_put(w, (ts - e->prev_ts) & KEEP_L(e, timestamp));
	STAT_L(e, timestamp, w - w0);
	e->prev_ts = ts;
	return w;
}

/* One TEXT item; the newline a formatted line ends with is left out by the caller. */
static int put_text(struct cg_cenc *e, const char *line, size_t n)
{
	uint8_t *w = room(e, HOT_MAX + CG_VARINT_MAX + n);
	if (!w)
		return -E2BIG;
	w = put_op(e, put_thread(e, w, false), CG_CF_OP_TEXT, false);
	uint8_t *w0 = w;
	size_t kept = KEEP(e, text) ? n : 0;
	w = cg_varint_put(w, kept);
	memcpy(w, line, kept);
	w += kept;
	STAT(e, text, w - w0);
	e->st.records++;
	e->w = w;
	return 0;
}

int cg_cenc_text(struct cg_cenc *e, const char *line, size_t n)
{
	if (n && line[n - 1] == '\n')
		n--;
	return put_text(e, line, n);
}

/* A record the formatter writes into the hot buffer, whose bound it never passes. */
static void hot_text(struct cg_cenc *e, const struct cg_rec *r)
{
	e->hot.len = 0;
	cg_jsonl_format(&e->hot, r);
	if (e->hot.err || e->hot.p == NULL) {
		e->hot.err = 0;
		return;
	}
	put_text(e, e->hot.p, e->hot.len - 1);
}

static struct cg_sv str_sv(const struct cg_cenc *e, uint32_t id)
{
	const struct str_ent *x = &e->str[id];
	return (struct cg_sv){e->sbytes + x->off, x->len};
}

/* "0x" and lowercase hex without leading zeros, after "vmm:" for VMM; returns the length. */
static size_t fmt_tensor_id(char *out, uint64_t addr, bool vmm)
{
	size_t n = 0;
	if (vmm) {
		memcpy(out, "vmm:", 4);
		n = 4;
	}
	memcpy(out + n, "0x", 2);
	return n + 2 + cg_fmt_hex(out + n + 2, addr);
}

static size_t fmt_span_id(char *out, uint64_t id)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + id % 10);
		id /= 10;
	} while (id);
	out[0] = 's';
	for (size_t i = 0; i < n; i++)
		out[1 + i] = tmp[n - 1 - i];
	return n + 1;
}

static void memory_text(struct cg_cenc *e, uint32_t cls, uint64_t ts, uint64_t addr, uint64_t bytes,
			bool is_free, uint64_t stack, bool pre)
{
	const struct cls_ent *c = &e->cls[cls];
	char id[32];
	struct cg_rec r = {.kind = CGTRACE_KIND_MEMORY};
	r.u.memory = (struct cg_rec_memory){
	    .timestamp_ns = ts,
	    .tensor_id = {id, (uint32_t)fmt_tensor_id(id, addr, c->flags & CG_CLASS_VMM)},
	    .span_id = str_sv(e, c->span),
	    .op_name = c->op == UINT32_MAX ? CG_SV_NONE : str_sv(e, c->op),
	    .device = str_sv(e, c->device),
	    .bytes = bytes,
	    .action = is_free ? CGTRACE_FREE : CGTRACE_ALLOC,
	    .shape = &bytes,
	    .ndim = 1,
	    .dtype = CG_SV_LIT("u8"),
	    .category = c->category,
	    .managed = !is_free && (c->flags & CG_CLASS_MANAGED),
	    .cgprobe_preexisting = pre,
	    .stack = stack,
	};
	hot_text(e, &r);
}

/* ------------------------------------------------------------------ */
/* The hot path                                                        */
/* ------------------------------------------------------------------ */

static inline uint8_t *put_memory_head(struct cg_cenc *e, uint8_t *w, uint32_t cls, uint8_t op,
				       uint64_t ts, bool lean)
{
	uint32_t c = cls & (uint32_t)KEEP_L(e, class_ref);
	if (likely(c < CG_CF_MEM_CLASS)) {
		w = put_op(e, w, (uint8_t)(op | c), lean);
	} else {
		w = put_op(e, w, (uint8_t)(op | CG_CF_MEM_CLASS), lean);
		uint8_t *w0 = w;
		w = cg_varint_put(w, c);
		STAT_L(e, class_ref, w - w0);
	}
	return put_ts(e, w, ts, lean);
}

static inline uint32_t seen_slot(uint64_t addr)
{
	return (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> (64 - SEEN_BITS));
}

/* The ref of a history entry ord when it holds addr and is in reach; UINT64_MAX otherwise. */
static inline uint64_t hist_ref(const struct cg_cenc *e, uint64_t ord, uint64_t addr)
{
	uint64_t back = e->next_ord - 1 - ord;
	if (ord >= e->blk_first_ord && ord < e->next_ord && back < CG_COMPACT_HISTORY &&
	    e->hist[ord & HIST_MASK] == addr)
		return back * 2;
	return UINT64_MAX;
}

/* The most recent history entry of addr the table knows, as a ref; UINT64_MAX for none. */
static inline uint64_t seen_ref(const struct cg_cenc *e, uint64_t addr)
{
	uint32_t back = (uint32_t)e->next_ord - 1 - e->seen[seen_slot(addr)];
	return hist_ref(e, e->next_ord - 1 - back, addr);
}

/*
 * The address field: the history's ref when it names the address and is
 * no longer than the delta, else the delta; then the address joins the
 * history. Returns its ordinal.
 */
static inline uint64_t put_addr(struct cg_cenc *e, uint8_t **wp, uint64_t addr, uint64_t ref,
				bool lean)
{
	uint64_t delta = cg_zigzag((int64_t)(addr - e->prev_addr)) << 1 | 1;
	if (ref > delta)
		ref = delta;
	uint8_t *w0 = *wp;
	*wp = cg_varint_put(*wp, ref & KEEP_L(e, address));
	STAT_L(e, address, *wp - w0);
	e->prev_addr = addr;
	uint64_t ord = e->next_ord++;
	e->hist[ord & HIST_MASK] = addr;
	e->seen[seen_slot(addr)] = (uint32_t)ord;
	return ord;
}

static inline unsigned varint_len(uint64_t v)
{
	unsigned n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * Whether a record can go the hot way: a lean encoder, a known class, a
 * time not before the last and room for the item. The entry points test
 * it first and leave anything else to a call of their own: the hot way
 * then calls nothing and saves no registers (that was a fifth of its
 * instructions).
 */
static inline bool hot_ok(const struct cg_cenc *e, uint32_t cls, uint64_t ts)
{
	return likely(e->lean) && likely(cls < e->ncls) && likely(ts >= e->prev_ts) &&
	       likely(e->w + HOT_MAX <= e->lim);
}

/* An allocation's MEMORY item at w, where there is room and its time is in order. */
static inline __attribute__((always_inline)) uint64_t
alloc_body(struct cg_cenc *e, uint8_t *w, uint32_t cls, uint64_t ts, uint64_t addr, uint64_t bytes,
	   uint64_t stack, bool pre, bool lean)
{
	w = put_thread(e, w, lean);
	w = put_memory_head(e, w, cls, stack || pre ? CG_CF_OP_MEMORY | CG_CF_MEM_EXT : CG_CF_OP_MEMORY, ts,
			    lean);
	/* malloc hands out again what was freed a moment ago: the history often names it. */
	uint64_t ord = put_addr(e, &w, addr, seen_ref(e, addr), lean);
	uint8_t *w0 = w;
	w = cg_varint_put(w, bytes & KEEP_L(e, size));
	STAT_L(e, size, w - w0);
	if (stack || pre) {
		/* The extension area: its length, then key 1 and the stack id, key 2 and 1. */
		w0 = w;
		*w++ = (uint8_t)((stack ? 1 + varint_len(stack) : 0) + (pre ? 2 : 0));
		if (stack) {
			*w++ = CG_CF_EXT_STACK;
			w = cg_varint_put(w, stack & KEEP_L(e, stack));
		}
		if (pre) {
			*w++ = CG_CF_EXT_PREEXISTING;
			*w++ = 1;
		}
		STAT_L(e, stack, w - w0);
	}
	e->w = w;
	e->st.records++;
	e->pending = false;
	return ord;
}

static inline __attribute__((always_inline)) uint64_t
alloc_item_as(struct cg_cenc *e, uint32_t cls, uint64_t ts, uint64_t addr, uint64_t bytes,
	      uint64_t stack, bool pre, bool lean)
{
	if (unlikely(ts < e->prev_ts || cls >= e->ncls)) {
		if (cls >= e->ncls)
			return UINT64_MAX;
		/* Pending items go to the next packed record: a fresh block takes any ts. */
		if (!e->pending) {
			memory_text(e, cls, ts, addr, bytes, false, stack, pre);
			return UINT64_MAX;
		}
		end_block(e);
	}
	return alloc_body(e, hot_room(e), cls, ts, addr, bytes, stack, pre, lean);
}

static __attribute__((noinline)) uint64_t alloc_item(struct cg_cenc *e, uint32_t cls, uint64_t ts,
						     uint64_t addr, uint64_t bytes, uint64_t stack,
						     bool pre)
{
	if (likely(e->lean))
		return alloc_item_as(e, cls, ts, addr, bytes, stack, pre, true);
	return alloc_item_as(e, cls, ts, addr, bytes, stack, pre, false);
}

uint64_t cg_cenc_alloc(struct cg_cenc *e, uint32_t cls, uint64_t ts, uint64_t addr, uint64_t bytes)
{
	return alloc_item(e, cls, ts, addr, bytes, 0, false);
}

uint64_t cg_cenc_alloc_pre(struct cg_cenc *e, uint32_t cls, uint64_t ts, uint64_t addr,
			   uint64_t bytes)
{
	return alloc_item(e, cls, ts, addr, bytes, 0, true);
}

uint64_t cg_cenc_alloc_stack(struct cg_cenc *e, uint32_t cls, uint64_t ts, uint64_t addr,
			     uint64_t bytes, uint64_t stack)
{
	if (!hot_ok(e, cls, ts))
		return alloc_item(e, cls, ts, addr, bytes, stack, false);
	return alloc_body(e, e->w, cls, ts, addr, bytes, stack, false, true);
}

/* A STACK item (flat) or a TREE item (with parent), the frames as deltas from the one before. */
static bool stack_item(struct cg_cenc *e, uint8_t op, uint64_t id, uint64_t parent,
		       const uint64_t *frames, uint32_t n)
{
	if (!id || !n || n > CG_STACK_FRAMES_MAX)
		return false;
	/* Past the readers' bound of pending items, the records that take them go out first. */
	if (e->blk_stacks == PENDING_STACKS_MAX)
		end_block(e);
	if (e->sw + STACK_ITEM_MAX > e->slim)
		end_stack_block(e);
	uint64_t lo = op == CG_CF_OP_TREE ? id - n + 1 : id;
	if (e->sw == e->sraw || lo < e->s_first)
		e->s_first = lo;
	if (e->sw == e->sraw || id > e->s_last)
		e->s_last = id;
	e->blk_stacks++;
	uint8_t *w = e->sw;
	uint64_t k = KEEP(e, stack), prev = 0;
	uint8_t *w0 = w;
	*w++ = op;
	w = cg_varint_put(w, id & k);
	if (op == CG_CF_OP_TREE)
		w = cg_varint_put(w, parent & k);
	w = cg_varint_put(w, n);
	/* Frames of one module are close: each is a delta from the one before. */
	for (uint32_t i = 0; i < n; i++) {
		w = cg_varint_put(w, cg_zigzag((int64_t)(frames[i] - prev)) & k);
		prev = frames[i];
	}
	STAT(e, stack, w - w0);
	e->sw = w;
	e->pending = true;
	return true;
}

bool cg_cenc_stack(struct cg_cenc *e, uint64_t id, const uint64_t *frames, uint32_t n)
{
	return stack_item(e, CG_CF_OP_STACK, id, 0, frames, n);
}

bool cg_cenc_tree(struct cg_cenc *e, uint64_t id, uint64_t parent, const uint64_t *frames,
		  uint32_t n)
{
	/* Its stacks id - n + 1 ... id start at 1 or above, and none of them is their parent. */
	if (id < n || (parent > id - n && parent <= id))
		return false;
	return stack_item(e, CG_CF_OP_TREE, id, parent, frames, n);
}

/* What a MODULE item can hold (docs/stacks.md). */
static bool module_fits(const struct cg_modv *m)
{
	if (!m->path.p || m->path.n > CG_CENC_STRING_LEN_MAX || memchr(m->path.p, 0, m->path.n) ||
	    m->start > m->end)
		return false;
	const struct cg_sv b = m->build_id;
	if (!b.p)
		return true;
	if (b.n < 2 || b.n > CG_BUILD_ID_HEX_MAX || b.n % 2)
		return false;
	for (uint32_t i = 0; i < b.n; i++)
		if (!((b.p[i] >= '0' && b.p[i] <= '9') || (b.p[i] >= 'a' && b.p[i] <= 'f')))
			return false;
	return true;
}

bool cg_cenc_module(struct cg_cenc *e, const struct cg_modv *m)
{
	if (!module_fits(m))
		return false;
	size_t bid = m->build_id.p ? m->build_id.n : 0;
	uint8_t *w = room(e, 1 + 5 * CG_VARINT_MAX + m->path.n + bid);
	if (!w)
		return false;
	uint64_t k = KEEP(e, tables);
	uint8_t *w0 = w;
	*w++ = CG_CF_OP_MODULE;
	size_t kept = k ? m->path.n : 0;
	w = cg_varint_put(w, kept);
	memcpy(w, m->path.p, kept);
	w += kept;
	w = cg_varint_put(w, m->base & k);
	w = cg_varint_put(w, m->start & k);
	w = cg_varint_put(w, m->end & k);
	kept = k ? bid : 0;
	w = cg_varint_put(w, kept);
	if (kept)
		memcpy(w, m->build_id.p, kept);
	w += kept;
	STAT(e, tables, w - w0);
	e->w = w;
	e->pending = true;
	return true;
}

/* A free's MEMORY item at w, where there is room and its time is in order. */
static inline __attribute__((always_inline)) void free_body(struct cg_cenc *e, uint8_t *w,
							   uint32_t cls, uint64_t ts,
							   uint64_t addr, uint64_t ord, bool lean)
{
	w = put_thread(e, w, lean);
	w = put_memory_head(e, w, cls, CG_CF_OP_MEMORY | CG_CF_MEM_FREE, ts, lean);
	/* Its alloc by the ordinal the caller kept; the table when it kept none. */
	uint64_t ref = hist_ref(e, ord, addr);
	if (ref == UINT64_MAX)
		ref = seen_ref(e, addr);
	put_addr(e, &w, addr, ref, lean);
	e->w = w;
	e->st.records++;
	e->pending = false;
}

static __attribute__((noinline)) void free_item(struct cg_cenc *e, uint32_t cls, uint64_t ts,
						uint64_t addr, uint64_t ord)
{
	if (unlikely(cls >= e->ncls))
		return;
	if (unlikely(ts < e->prev_ts))
		end_block(e);
	if (likely(e->lean))
		free_body(e, hot_room(e), cls, ts, addr, ord, true);
	else
		free_body(e, hot_room(e), cls, ts, addr, ord, false);
}

void cg_cenc_free(struct cg_cenc *e, uint32_t cls, uint64_t ts, uint64_t addr, uint64_t ord)
{
	if (!hot_ok(e, cls, ts)) {
		free_item(e, cls, ts, addr, ord);
		return;
	}
	free_body(e, e->w, cls, ts, addr, ord, true);
}

/* parent: 0 for none, else the parent's number plus 1, as the item has it. */
static void span_start(struct cg_cenc *e, uint64_t ts, uint64_t id, uint64_t parent, uint32_t name,
		       uint8_t span_kind, uint8_t step, bool measured)
{
	if (unlikely(ts < e->prev_ts || name >= e->nstr || span_kind >= CG_SPAN_KIND_COUNT ||
		     step >= CG_STEP_COUNT)) {
		char sid[24], pid[24];
		struct cg_rec r = {.kind = CGTRACE_KIND_SPAN_START};
		r.u.span_start = (struct cg_rec_span_start){
		    .id = {sid, (uint32_t)fmt_span_id(sid, id)},
		    .parent_id = parent
				     ? (struct cg_sv){pid, (uint32_t)fmt_span_id(pid, parent - 1)}
				     : CG_SV_NONE,
		    .name = name < e->nstr ? str_sv(e, name) : CG_SV_LIT(""),
		    .start_ns = ts,
		    .span_kind = span_kind,
		    .measured = measured,
		    .step = step,
		};
		hot_text(e, &r);
		return;
	}
	uint8_t *w =
	    put_ts(e, put_op(e, put_thread(e, hot_room(e), false), CG_CF_OP_SPAN_START, false), ts, false);
	uint64_t k = KEEP(e, other);
	uint8_t *w0 = w;
	w = cg_varint_put(w, id & k);
	w = cg_varint_put(w, parent & k);
	w = cg_varint_put(w, name & k);
	*w++ = (uint8_t)(span_kind & k);
	*w++ = (uint8_t)(step & k);
	*w++ = (uint8_t)(measured & k);
	STAT(e, other, w - w0);
	e->w = w;
	e->st.records++;
}

void cg_cenc_span_start(struct cg_cenc *e, uint64_t ts, uint64_t id, uint64_t parent, uint32_t name,
			uint8_t span_kind, uint8_t step, bool measured)
{
	span_start(e, ts, id, parent ? parent + 1 : 0, name, span_kind, step, measured);
}

void cg_cenc_span_end(struct cg_cenc *e, uint64_t id, uint64_t duration_ns)
{
	uint8_t *w = put_op(e, put_thread(e, hot_room(e), false), CG_CF_OP_SPAN_END, false);
	uint64_t k = KEEP(e, other);
	uint8_t *w0 = w;
	w = cg_varint_put(w, id & k);
	w = cg_varint_put(w, duration_ns & k);
	STAT(e, other, w - w0);
	e->w = w;
	e->st.records++;
}

void cg_cenc_device_memory(struct cg_cenc *e, uint64_t ts, uint32_t device, uint64_t used,
			   uint64_t free_bytes, const uint64_t *reserved, const uint64_t *oom)
{
	if (unlikely(ts < e->prev_ts || device >= e->nstr)) {
		struct cg_rec r = {.kind = CGTRACE_KIND_DEVICE_MEMORY};
		r.u.device_memory = (struct cg_rec_device_memory){
		    .timestamp_ns = ts,
		    .device = device < e->nstr ? str_sv(e, device) : CG_SV_LIT(""),
		    .used_bytes = used,
		    .free_bytes = free_bytes,
		    .has_reserved = reserved != NULL,
		    .reserved_bytes = reserved ? *reserved : 0,
		    .has_oom_request = oom != NULL,
		    .oom_request_bytes = oom ? *oom : 0,
		};
		hot_text(e, &r);
		return;
	}
	uint8_t *w = put_ts(
	    e, put_op(e, put_thread(e, hot_room(e), false), CG_CF_OP_DEVICE_MEMORY, false), ts, false);
	uint64_t k = KEEP(e, other);
	uint8_t *w0 = w;
	w = cg_varint_put(w, device & k);
	w = cg_varint_put(w, used & k);
	w = cg_varint_put(w, free_bytes & k);
	*w++ = (uint8_t)(((reserved ? 1 : 0) | (oom ? 2 : 0)) & k);
	if (reserved)
		w = cg_varint_put(w, *reserved & k);
	if (oom)
		w = cg_varint_put(w, *oom & k);
	STAT(e, other, w - w0);
	e->w = w;
	e->st.records++;
}

/* ------------------------------------------------------------------ */
/* Parsed records (cgtrace export)                                     */
/* ------------------------------------------------------------------ */

/* The record's formatted line as TEXT. */
static int rec_text(struct cg_cenc *e, const struct cg_rec *r)
{
	e->text.len = 0;
	cg_jsonl_format(&e->text, r);
	if (e->text.err) {
		int err = e->text.err;
		e->text.err = 0;
		return err;
	}
	return put_text(e, e->text.p, e->text.len - 1);
}

/* A span id the packed form spells: "s" and a decimal number without leading zeros. */
static bool parse_span_id(struct cg_sv s, uint64_t *id)
{
	if (!s.p || s.n < 2 || s.n > 21 || s.p[0] != 's' || (s.p[1] == '0' && s.n > 2))
		return false;
	uint64_t v = 0;
	for (uint32_t i = 1; i < s.n; i++) {
		unsigned d = (unsigned)(s.p[i] - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*id = v;
	return true;
}

static uint32_t sv_string(struct cg_cenc *e, struct cg_sv s)
{
	return s.p ? cg_cenc_string(e, s.p, s.n) : CG_CENC_NONE;
}

/*
 * What a reader makes of the packed memory record: the record must equal
 * it field for field (cg_rec_equal), which a field added to the kind
 * later fails until the packed form learns it.
 */
static bool memory_fits(const struct cg_rec *r, uint64_t addr, bool vmm, bool managed, bool pre)
{
	const struct cg_rec_memory *m = &r->u.memory;
	char id[32];
	struct cg_rec d = {.kind = CGTRACE_KIND_MEMORY};
	d.u.memory = (struct cg_rec_memory){
	    .timestamp_ns = m->timestamp_ns,
	    .tensor_id = {id, (uint32_t)fmt_tensor_id(id, addr, vmm)},
	    .span_id = m->span_id,
	    .op_name = m->op_name,
	    .device = m->device,
	    .bytes = m->bytes,
	    .action = m->action,
	    .shape = &m->bytes,
	    .ndim = 1,
	    .dtype = CG_SV_LIT("u8"),
	    .category = m->category,
	    .managed = managed,
	    .cgprobe_preexisting = pre,
	    /* Carried by the extension area and the STACK and MODULE items before it. */
	    .stack = m->stack,
	    .stack_frames = m->stack_frames,
	    .n_stack_frames = m->n_stack_frames,
	    .cgprobe_stack_parent = m->cgprobe_stack_parent,
	    .has_stack_parent = m->has_stack_parent,
	    .modules = m->modules,
	    .n_modules = m->n_modules,
	};
	return cg_rec_equal(&d, r);
}

/* Whether the stack fields fit the packed form: an alloc's id, frames with it, modules the items hold. */
static bool stacks_fit(const struct cg_rec_memory *m)
{
	if ((m->stack && m->action != CGTRACE_ALLOC) || (m->n_stack_frames && !m->stack) ||
	    m->n_stack_frames > CG_STACK_FRAMES_MAX || (m->has_stack_parent && !m->n_stack_frames))
		return false;
	/* A tree definition the TREE item cannot hold rides as TEXT, where the reader says why. */
	if (m->has_stack_parent && (m->stack < m->n_stack_frames ||
				    (m->cgprobe_stack_parent > m->stack - m->n_stack_frames &&
				     m->cgprobe_stack_parent <= m->stack)))
		return false;
	for (uint32_t i = 0; i < m->n_modules; i++)
		if (!module_fits(&m->modules[i]))
			return false;
	return true;
}

/* The STACK or TREE and MODULE items a packed record's fields ride on, written right before it. */
static void stack_items(struct cg_cenc *e, const struct cg_rec_memory *m)
{
	if (m->n_stack_frames && m->has_stack_parent)
		cg_cenc_tree(e, m->stack, m->cgprobe_stack_parent, m->stack_frames,
			     m->n_stack_frames);
	else if (m->n_stack_frames)
		cg_cenc_stack(e, m->stack, m->stack_frames, m->n_stack_frames);
	for (uint32_t i = 0; i < m->n_modules; i++)
		cg_cenc_module(e, &m->modules[i]);
}

static int rec_memory(struct cg_cenc *e, const struct cg_rec *r)
{
	const struct cg_rec_memory *m = &r->u.memory;
	uint64_t addr = 0;
	bool vmm = false, is_free = m->action == CGTRACE_FREE;
	bool canon = cg_scan_hex_id(m->tensor_id.p, m->tensor_id.n, &vmm, &addr);
	uint32_t dev = canon ? sv_string(e, m->device) : CG_CENC_NONE;
	uint32_t space = dev << 1 | vmm; /* the live table's, with a device */
	bool pack = canon && dev != CG_CENC_NONE && m->action <= CGTRACE_FREE &&
		    m->category < CGTRACE_CAT_COUNT && stacks_fit(m) &&
		    memory_fits(r, addr, vmm, !is_free && m->managed,
				!is_free && m->cgprobe_preexisting);
	uint64_t live_bytes = 0, live_ord = 0;
	if (pack && is_free) {
		bool live = e->o.track_live &&
			    cg_clive_get(&e->live, space, addr, &live_bytes, &live_ord);
		/* A late free is TEXT here: the hot call would end the block for it. */
		pack = live && live_bytes == m->bytes && m->timestamp_ns >= e->prev_ts;
	}
	uint32_t cls = CG_CENC_NONE;
	if (pack) {
		uint32_t span = sv_string(e, m->span_id);
		uint32_t op = m->op_name.p ? sv_string(e, m->op_name) : UINT32_MAX;
		uint8_t flags =
		    (uint8_t)((m->managed ? CG_CLASS_MANAGED : 0) | (vmm ? CG_CLASS_VMM : 0));
		if (span != CG_CENC_NONE && (op != CG_CENC_NONE || !m->op_name.p))
			cls = cg_cenc_class(e, span, op, dev, m->category, flags);
	}
	int ret = 0;
	uint64_t ord = UINT64_MAX;
	if (cls == CG_CENC_NONE) {
		ret = rec_text(e, r);
	} else {
		stack_items(e, m);
		if (is_free)
			cg_cenc_free(e, cls, m->timestamp_ns, addr, live_ord);
		else
			ord = alloc_item(e, cls, m->timestamp_ns, addr, m->bytes, m->stack,
					 m->cgprobe_preexisting);
	}
	if (ret == 0 && e->o.track_live && dev != CG_CENC_NONE) {
		uint64_t bytes;
		if (is_free)
			cg_clive_take(&e->live, space, addr, &bytes);
		else
			ret = cg_clive_set(&e->live, space, addr, m->bytes, ord);
	}
	return ret;
}

static int rec_span_start(struct cg_cenc *e, const struct cg_rec *r)
{
	const struct cg_rec_span_start *s = &r->u.span_start;
	uint64_t id, parent = 0;
	if (!parse_span_id(s->id, &id) || !s->name.p || s->span_kind >= CG_SPAN_KIND_COUNT ||
	    s->step >= CG_STEP_COUNT)
		return rec_text(e, r);
	if (s->parent_id.p) {
		if (!parse_span_id(s->parent_id, &parent) || parent == UINT64_MAX)
			return rec_text(e, r);
		parent++;
	}
	char sid[24], pid[24];
	struct cg_rec d = {.kind = CGTRACE_KIND_SPAN_START};
	d.u.span_start = (struct cg_rec_span_start){
	    .id = {sid, (uint32_t)fmt_span_id(sid, id)},
	    .parent_id =
		parent ? (struct cg_sv){pid, (uint32_t)fmt_span_id(pid, parent - 1)} : CG_SV_NONE,
	    .name = s->name,
	    .start_ns = s->start_ns,
	    .span_kind = s->span_kind,
	    .measured = s->measured,
	    .step = s->step,
	};
	if (!cg_rec_equal(&d, r))
		return rec_text(e, r);
	uint32_t name = sv_string(e, s->name);
	if (name == CG_CENC_NONE)
		return rec_text(e, r);
	span_start(e, s->start_ns, id, parent, name, s->span_kind, s->step, s->measured);
	return 0;
}

static int rec_span_end(struct cg_cenc *e, const struct cg_rec *r)
{
	uint64_t id;
	if (!parse_span_id(r->u.span_end.id, &id))
		return rec_text(e, r);
	cg_cenc_span_end(e, id, r->u.span_end.duration_ns);
	return 0;
}

static int rec_device_memory(struct cg_cenc *e, const struct cg_rec *r)
{
	const struct cg_rec_device_memory *m = &r->u.device_memory;
	struct cg_rec d = {.kind = CGTRACE_KIND_DEVICE_MEMORY};
	d.u.device_memory = (struct cg_rec_device_memory){
	    .timestamp_ns = m->timestamp_ns,
	    .device = m->device,
	    .used_bytes = m->used_bytes,
	    .free_bytes = m->free_bytes,
	    .has_reserved = m->has_reserved,
	    .reserved_bytes = m->reserved_bytes,
	    .has_oom_request = m->has_oom_request,
	    .oom_request_bytes = m->oom_request_bytes,
	};
	uint32_t dev = cg_rec_equal(&d, r) ? sv_string(e, m->device) : CG_CENC_NONE;
	if (dev == CG_CENC_NONE)
		return rec_text(e, r);
	cg_cenc_device_memory(e, m->timestamp_ns, dev, m->used_bytes, m->free_bytes,
			      m->has_reserved ? &m->reserved_bytes : NULL,
			      m->has_oom_request ? &m->oom_request_bytes : NULL);
	return 0;
}

int cg_cenc_rec(struct cg_cenc *e, const struct cg_rec *r)
{
	int ret;
	switch (r->kind) {
	case CGTRACE_KIND_MEMORY:
		ret = rec_memory(e, r);
		break;
	case CGTRACE_KIND_SPAN_START:
		ret = rec_span_start(e, r);
		break;
	case CGTRACE_KIND_SPAN_END:
		ret = rec_span_end(e, r);
		break;
	case CGTRACE_KIND_DEVICE_MEMORY:
		ret = rec_device_memory(e, r);
		break;
	default:
		ret = rec_text(e, r);
	}
	return ret < 0 ? ret : e->err;
}

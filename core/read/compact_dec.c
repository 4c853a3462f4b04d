/* SPDX-License-Identifier: MIT */
/*
 * The compact decoder. Blocks are read whole (a memory source is used in
 * place), checked (lengths, CRC-32, one zstd frame of the stated size) and
 * decompressed with one reused context; items are then decoded one at a
 * time straight out of the raw bytes. Packed records come out as struct
 * cg_rec views: strings point into the cumulative tables or into small
 * buffers of the decoder that hold the formatted ids, so a record costs a
 * few varints, a live-table probe and no allocation.
 */
#include "compact_dec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "arena.h"
#include "cdec_pending.h"
#include "compact_format.h"
#include "compact_live.h"
#include "crc32.h"
#include "fmt_int.h"
#include "hash.h"
#include "num_scan.h"
#include "parse_fast.h"
#include "parse_ref.h"
#include "u64map.h"
#include "utf8.h"
#include "varint.h"

#define READ_STEP (1u << 20)
#define TENSOR_ID_END (4 + 2 + 16) /* where the hex digits of a tensor_id end in ids */

struct cls {
	struct cg_sv span, op, device;
	uint32_t space; /* live-table space: device number * 2, + 1 with vmm: */
	uint8_t category;
	bool managed, vmm;
	uint8_t yielded; /* lean: bit 0 an alloc of the class was yielded whole, bit 1 a free */
};

/* The most STACK or MODULE items waiting for their record at once. */
#define PENDING_MAX 65536u

struct cg_cdec {
	/* The source. */
	int fd;
	const uint8_t *mem;
	size_t mem_len;
	uint64_t pos; /* bytes consumed, of the file */
	uint8_t pre[16];
	size_t npre, pre_pos;

	/* The block being decoded. */
	uint8_t *payload, *raw;
	size_t payload_cap, raw_cap;
	const uint8_t *p, *end;
	ZSTD_DCtx *z;
	bool header_done;
	uint32_t flags; /* the file header's */

	/* Cumulative tables. */
	struct cg_arena strs;
	struct cg_sv *strings;
	uint32_t n_strings, cap_strings;
	struct cls *classes;
	uint32_t n_classes, cap_classes;
	struct cg_sv *devices; /* live-table devices, by name */
	uint32_t n_devices, cap_devices;
	struct cg_map device_map; /* hash of a name -> device number */
	struct cg_clive live;
	/*
	 * STACK and MODULE items not yet taken by a packed memory record
	 * (docs/stacks.md). Their strings live in strs, as long as the
	 * decoder; their frames in pend_mem until a record takes them, then
	 * in frames_to (the caller's, cg_cdec_frames_to; else strs), so that
	 * a reader a batch ahead frees a batch's frames with the batch.
	 */
	struct cg_arena pend_mem;   /* emptied whenever no stack is pending */
	struct cg_arena *frames_to;
	struct cg_pending pend_stacks;
	struct cg_modv *pend_mods;
	uint32_t n_pend_mods, cap_pend_mods;

	/* Block state. */
	uint64_t prev_ts, prev_addr, thread;
	uint64_t blk_threads[CG_CF_BLOCK_THREADS]; /* the block's THREAD items, for THREAD_AGAIN */
	unsigned n_blk_threads;
	struct cg_cdec_mem last; /* the last packed memory record */
	struct cg_cdec_mem *dst_mem; /* where the gist of packed memory records goes */
	bool lean;
	bool no_frames;   /* STACK and TREE frames checked, not kept (cg_cdec_no_frames) */
	bool skip_stacks; /* stack blocks yielded as their ranges (cg_cdec_skip_stacks) */
	bool in_stacks;   /* the block is a stack block, of ids s_first to s_last */
	uint64_t s_first, s_last;
	uint64_t hist[CG_CF_HISTORY];
	uint64_t hist_n;

	/* Output. */
	struct cg_rec *dst; /* where packed records go, their ids in dst_ids */
	char *dst_ids;
	struct cg_rec rec, text;
	char ids[CG_CDEC_IDS];
	struct cg_parse parse; /* for TEXT memory records' live-table updates */
	uint64_t records;
	int state; /* 1 going, 0 ended, < 0 the sticky error */
	bool truncated;
	char err[320];
};

/* ---- messages ---- */

__attribute__((format(printf, 3, 4))) static int fail(struct cg_cdec *d, int ret,
							const char *fmt, ...)
{
	int n = snprintf(d->err, sizeof(d->err), "record %llu: ",
			 (unsigned long long)d->records + 1);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->err + n, sizeof(d->err) - (size_t)n, fmt, ap);
	va_end(ap);
	d->state = ret;
	return ret;
}

static int io_fail(struct cg_cdec *d, int ret)
{
	snprintf(d->err, sizeof(d->err), "%s", strerror(-ret));
	d->state = ret;
	return ret;
}

static int varint_fail(struct cg_cdec *d, int r, const char *item)
{
	if (r == -1)
		return fail(d, -EBADMSG, "%s item cut by the end of its block", item);
	return fail(d, -EBADMSG, "bad varint in a %s item", item);
}

/* ---- the source ---- */

static int open_common(struct cg_cdec **out)
{
	struct cg_cdec *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fd = -1;
	d->state = 1;
	cg_arena_init(&d->strs);
	cg_parse_init(&d->parse);
	cg_cdec_target(d, NULL, NULL, NULL);
	*out = d;
	return 0;
}

int cg_cdec_open_fd(struct cg_cdec **out, int fd, const void *pre, size_t npre)
{
	if (npre > sizeof((*out)->pre))
		return -EINVAL;
	int r = open_common(out);
	if (r < 0)
		return r;
	(*out)->fd = fd;
	memcpy((*out)->pre, pre, npre);
	(*out)->npre = npre;
	return 0;
}

int cg_cdec_open_mem(struct cg_cdec **out, const void *data, size_t len)
{
	int r = open_common(out);
	if (r < 0)
		return r;
	(*out)->mem = data;
	(*out)->mem_len = len;
	return 0;
}

void cg_cdec_close(struct cg_cdec *d)
{
	if (!d)
		return;
	free(d->payload);
	free(d->raw);
	ZSTD_freeDCtx(d->z);
	cg_arena_fini(&d->strs);
	cg_arena_fini(&d->pend_mem);
	free(d->strings);
	free(d->classes);
	free(d->devices);
	cg_pending_free(&d->pend_stacks);
	free(d->pend_mods);
	cg_map_free(&d->device_map);
	cg_clive_fini(&d->live);
	cg_parse_fini(&d->parse);
	free(d);
}

void cg_cdec_frames_to(struct cg_cdec *d, struct cg_arena *a)
{
	d->frames_to = a;
}

void cg_cdec_target(struct cg_cdec *d, struct cg_rec *rec, char *ids, struct cg_cdec_mem *mem)
{
	d->dst = rec ? rec : &d->rec;
	d->dst_ids = rec ? ids : d->ids;
	d->dst_mem = rec ? mem : &d->last;
}

uint64_t cg_cdec_records(const struct cg_cdec *d)
{
	return d->records;
}

bool cg_cdec_truncated(const struct cg_cdec *d)
{
	return d->truncated;
}

const char *cg_cdec_error(const struct cg_cdec *d)
{
	return d->err;
}

void cg_cdec_last_memory(const struct cg_cdec *d, struct cg_cdec_mem *out)
{
	*out = *d->dst_mem;
}

bool cg_cdec_in_order(const struct cg_cdec *d)
{
	return d->header_done && (d->flags & CG_CF_FLAG_IN_ORDER);
}

void cg_cdec_no_frames(struct cg_cdec *d, bool no_frames)
{
	d->no_frames = no_frames;
}

void cg_cdec_skip_stacks(struct cg_cdec *d, bool skip)
{
	d->skip_stacks = skip;
}

void cg_cdec_lean(struct cg_cdec *d, bool lean)
{
	d->lean = lean;
}

uint64_t cg_cdec_thread(const struct cg_cdec *d)
{
	return d->thread;
}

bool cg_cdec_sniff(const void *p, size_t n)
{
	size_t k = n < CG_COMPACT_MAGIC_LEN ? n : CG_COMPACT_MAGIC_LEN;
	return n > 0 && memcmp(p, CG_COMPACT_MAGIC, k) == 0;
}

/* Reads up to n bytes of a file source (the peeked ones first); fewer only at its end. */
static ssize_t fd_read(struct cg_cdec *d, uint8_t *dst, size_t n)
{
	size_t got = 0;
	if (d->pre_pos < d->npre) {
		size_t k = d->npre - d->pre_pos < n ? d->npre - d->pre_pos : n;
		memcpy(dst, d->pre + d->pre_pos, k);
		d->pre_pos += k;
		got = k;
	}
	while (got < n) {
		ssize_t r = read(d->fd, dst + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	d->pos += got;
	return (ssize_t)got;
}

/* The next n bytes of the source at *out: 1, 0 when it ends first, or -errno. */
static int take(struct cg_cdec *d, size_t n, uint8_t *small, const uint8_t **out)
{
	if (d->mem) {
		bool whole = d->mem_len - d->pos >= n;
		*out = d->mem + d->pos;
		d->pos = whole ? d->pos + n : d->mem_len;
		return whole;
	}
	uint8_t *dst = small;
	size_t got = 0;
	while (got < n) {
		/* Grow as bytes arrive, so that a cut file's claimed length costs nothing. */
		size_t want = n;
		if (!small) {
			want = got + (got > READ_STEP ? got : READ_STEP);
			want = want < n ? want : n;
			if (d->payload_cap < want) {
				uint8_t *b = realloc(d->payload, want);
				if (!b)
					return -ENOMEM;
				d->payload = b;
				d->payload_cap = want;
			}
			dst = d->payload;
		}
		ssize_t r = fd_read(d, dst + got, want - got);
		if (r < 0)
			return (int)r;
		got += (size_t)r;
		*out = dst;
		if (got < want)
			return 0;
	}
	*out = dst;
	return 1;
}

/* ---- blocks ---- */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int end_truncated(struct cg_cdec *d)
{
	d->truncated = true;
	d->state = 0;
	return 0;
}

static int read_header(struct cg_cdec *d)
{
	uint8_t small[CG_CF_HEADER_LEN];
	const uint8_t *h;
	int r = take(d, CG_CF_HEADER_LEN, small, &h);
	if (r < 0)
		return r == -ENOMEM ? fail(d, r, "out of memory") : io_fail(d, r);
	size_t have = r ? CG_CF_HEADER_LEN : (size_t)d->pos;
	if (!cg_cdec_sniff(h, have < CG_COMPACT_MAGIC_LEN ? have : CG_COMPACT_MAGIC_LEN))
		return fail(d, -EBADMSG, "not a compact trace (bad magic)");
	if (!r)
		return end_truncated(d);
	uint32_t version = le32(h + 8);
	if (version != CG_CF_VERSION)
		return fail(d, -EBADMSG, "compact encoding version %u is not supported (only 1)",
			    version);
	d->flags = le32(h + 12);
	d->header_done = true;
	return 1;
}

static int decompress(struct cg_cdec *d, uint64_t at, const uint8_t *payload, uint32_t plen,
		      uint32_t raw_len)
{
	unsigned long long fcs = ZSTD_getFrameContentSize(payload, plen);
	if (fcs == ZSTD_CONTENTSIZE_ERROR)
		return fail(d, -EBADMSG, "block at byte %llu: not a zstd frame",
			    (unsigned long long)at);
	if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != raw_len)
		return fail(d, -EBADMSG, "block at byte %llu: zstd frame of %llu bytes, raw_len %u",
			    (unsigned long long)at, fcs, raw_len);
	size_t fsz = ZSTD_findFrameCompressedSize(payload, plen);
	if (ZSTD_isError(fsz) || fsz != plen)
		return fail(d, -EBADMSG, "block at byte %llu: payload is not one whole zstd frame",
			    (unsigned long long)at);
	if (!d->z && !(d->z = ZSTD_createDCtx()))
		return fail(d, -ENOMEM, "out of memory");
	if (d->raw_cap < raw_len) {
		free(d->raw);
		d->raw_cap = 0;
		if (!(d->raw = malloc(raw_len)))
			return fail(d, -ENOMEM, "out of memory");
		d->raw_cap = raw_len;
	}
	size_t got = ZSTD_decompressDCtx(d->z, d->raw, raw_len, payload, plen);
	if (ZSTD_isError(got))
		return fail(d, -EBADMSG, "block at byte %llu: zstd: %s", (unsigned long long)at,
			    ZSTD_getErrorName(got));
	if (got != raw_len)
		return fail(d, -EBADMSG,
			    "block at byte %llu: decompresses to %zu bytes, raw_len %u",
			    (unsigned long long)at, got, raw_len);
	d->p = d->raw;
	d->end = raw_len ? d->raw + raw_len : d->raw; /* an empty block may have no buffer */
	return 1;
}

/* Loads the next block: 1, 0 at the end (clean or cut), or an error. */
static int load_block(struct cg_cdec *d)
{
	uint64_t at = d->pos;
	uint8_t small[CG_CF_BLOCK_HEADER_LEN];
	const uint8_t *h;
	int r = take(d, CG_CF_BLOCK_HEADER_LEN, small, &h);
	if (r < 0)
		return io_fail(d, r);
	if (r == 0) {
		if (d->pos == at) {
			d->state = 0;
			return 0;
		}
		return end_truncated(d);
	}
	uint8_t type = h[0];
	uint32_t plen = le32(h + 4), raw_len = le32(h + 8), crc = le32(h + 12);
	bool stacks = type == CG_CF_BLOCK_STACKS_ZSTD || type == CG_CF_BLOCK_STACKS_STORED;
	bool stored = type == CG_CF_BLOCK_STORED || type == CG_CF_BLOCK_STACKS_STORED;
	if ((!stacks && type != CG_CF_BLOCK_ZSTD && type != CG_CF_BLOCK_STORED) || h[1] || h[2] ||
	    h[3])
		return fail(d, -EBADMSG, "block at byte %llu: bad block type %02x %02x %02x %02x",
			    (unsigned long long)at, h[0], h[1], h[2], h[3]);
	if (raw_len > CG_CF_RAW_MAX)
		return fail(d, -EBADMSG, "block at byte %llu: raw_len %u over the limit of %u",
			    (unsigned long long)at, raw_len, CG_CF_RAW_MAX);
	/* A stack block's payload is its range, then the bytes as other blocks have them. */
	uint32_t head = stacks ? CG_CF_STACKS_HEAD_LEN : 0;
	if (plen < head || (stored && plen - head != raw_len) ||
	    (uint64_t)plen - head > (uint64_t)raw_len + CG_CF_PAYLOAD_SLACK)
		return fail(d, -EBADMSG,
			    "block at byte %llu: payload_len %u does not fit raw_len %u",
			    (unsigned long long)at, plen, raw_len);
	const uint8_t *payload;
	r = take(d, plen, NULL, &payload);
	if (r < 0)
		return r == -ENOMEM ? fail(d, r, "out of memory") : io_fail(d, r);
	if (r == 0)
		return end_truncated(d);
	uint32_t got = cg_crc32(0, payload, plen);
	if (got != crc)
		return fail(d, -EBADMSG, "block at byte %llu: CRC-32 %08x, the header says %08x",
			    (unsigned long long)at, got, crc);
	d->prev_ts = d->prev_addr = d->thread = 0;
	d->n_blk_threads = 0;
	d->hist_n = 0;
	d->in_stacks = stacks;
	if (stacks) {
		d->s_first = le64(payload);
		d->s_last = le64(payload + 8);
		if (d->s_first == 0 || d->s_first > d->s_last)
			return fail(d, -EBADMSG,
			            "block at byte %llu: stack block of ids %llu to %llu",
			            (unsigned long long)at, (unsigned long long)d->s_first,
			            (unsigned long long)d->s_last);
		payload += head;
		plen -= head;
		if (d->skip_stacks) {
			d->p = d->end = NULL;
			return CG_CDEC_STACKS;
		}
	}
	if (!stored)
		return decompress(d, at, payload, plen, raw_len);
	d->p = payload;
	d->end = plen ? payload + plen : payload;
	return 1;
}

/* ---- tables ---- */

static int grow(void **arr, uint32_t *cap, uint32_t n, size_t size)
{
	if (n < *cap)
		return 0;
	if (n == UINT32_MAX)
		return -ENOMEM;
	uint64_t c = *cap ? (uint64_t)*cap * 2 : 64;
	if (c > UINT32_MAX)
		c = UINT32_MAX;
	void *p = realloc(*arr, (size_t)c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = (uint32_t)c;
	return 0;
}

/* Copies s into the string store, ill-formed UTF-8 replaced as the JSONL writer replaces it. */
static struct cg_sv store(struct cg_cdec *d, const uint8_t *s, size_t n)
{
	size_t bad = 0, i = 0;
	while (i < n) {
		size_t k = cg_utf8_seq(s + i, n - i, &bad);
		if (!k)
			break;
		i += k;
	}
	size_t cap = i == n ? n : i + (n - i) * 3;
	char *p = cap ? cg_arena_alloc(&d->strs, cap) : (char *)"";
	if (!p)
		return CG_SV_NONE;
	memcpy(p, s, i);
	size_t o = i;
	while (i < n) {
		size_t k = cg_utf8_seq(s + i, n - i, &bad);
		if (k) {
			memcpy(p + o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(p + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += bad;
		}
	}
	return (struct cg_sv){p, (uint32_t)o};
}

/* The live-table device of a name (made on first sight); UINT32_MAX when out of memory. */
static uint32_t device_of(struct cg_cdec *d, struct cg_sv name, bool copy)
{
	uint64_t h = cg_hash_bytes(name.p, name.n);
	uint32_t pos = UINT32_MAX, idx;
	while (cg_map_next(&d->device_map, h, &pos, &idx))
		if (cg_sv_eq(d->devices[idx], name))
			return idx;
	if (d->n_devices >= UINT32_MAX / 2 - 1 ||
	    grow((void **)&d->devices, &d->cap_devices, d->n_devices, sizeof(*d->devices)) < 0)
		return UINT32_MAX;
	if (copy) {
		char *p = cg_arena_alloc(&d->strs, name.n ? name.n : 1);
		if (!p)
			return UINT32_MAX;
		memcpy(p, name.p, name.n);
		name.p = p;
	}
	if (cg_map_put(&d->device_map, h, d->n_devices) < 0)
		return UINT32_MAX;
	d->devices[d->n_devices] = name;
	return d->n_devices++;
}

/* ---- items ---- */

/*
 * A varint at *p. One byte is the common case; up to eight are read as one
 * word, without a branch per byte (varint lengths vary from record to
 * record, so a loop's exit is mispredicted); longer ones, and those near
 * the end of the block, take the full reader.
 */
static inline int get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *s = *p;
	if (s < end && *s < 0x80) {
		*v = *s;
		*p = s + 1;
		return 0;
	}
	if (end - s >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		uint64_t stop = ~w & 0x8080808080808080ull;
		if (stop) {
			unsigned bits = (unsigned)__builtin_ctzll(stop) + 1; /* 8 per byte taken */
			uint64_t x = bits == 64 ? w : w & ((1ull << bits) - 1);
			/* Squeeze out the continuation bits: 7-bit groups, then 14, then 28. */
			x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
			x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
			x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
			*v = x;
			*p = s + bits / 8;
			return 0;
		}
	}
	return cg_varint_get(p, end, v);
}

#define GET(v, item)                                                                               \
	do {                                                                                       \
		int r_ = get(&p, end, &(v));                                                       \
		if (r_)                                                                            \
			return varint_fail(d, r_, item);                                           \
	} while (0)

#define GET_U8(v, item)                                                                            \
	do {                                                                                       \
		if (p == end)                                                                      \
			return varint_fail(d, -1, item);                                           \
		(v) = *p++;                                                                        \
	} while (0)

/* A length-prefixed run of bytes of the item: *s and *n, p past it. */
#define GET_BYTES(s, n, item)                                                                      \
	do {                                                                                       \
		uint64_t len_;                                                                     \
		GET(len_, item);                                                                   \
		if (len_ > (uint64_t)(end - p))                                                    \
			return varint_fail(d, -1, item);                                           \
		(s) = p;                                                                           \
		(n) = (size_t)len_;                                                                \
		p += len_;                                                                         \
	} while (0)

static int string_item(struct cg_cdec *d)
{
	const uint8_t *p = d->p + 1, *end = d->end, *s;
	size_t n;
	GET_BYTES(s, n, "STRING");
	if (memchr(s, 0, n))
		return fail(d, -EBADMSG, "string %u holds a NUL byte", d->n_strings);
	if (grow((void **)&d->strings, &d->cap_strings, d->n_strings, sizeof(*d->strings)) < 0)
		return fail(d, -ENOMEM, "out of memory");
	struct cg_sv v = store(d, s, n);
	if (!v.p)
		return fail(d, -ENOMEM, "out of memory");
	d->strings[d->n_strings++] = v;
	d->p = p;
	return 0;
}

static int string_ref(struct cg_cdec *d, uint64_t id, struct cg_sv *out)
{
	if (id >= d->n_strings)
		return fail(d, -EBADMSG, "string %llu not defined", (unsigned long long)id);
	*out = d->strings[id];
	return 0;
}

static int class_item(struct cg_cdec *d)
{
	const uint8_t *p = d->p + 1, *end = d->end;
	uint64_t span, op, device;
	uint8_t category, flags;
	GET(span, "CLASS");
	GET(op, "CLASS");
	GET(device, "CLASS");
	GET_U8(category, "CLASS");
	GET_U8(flags, "CLASS");
	struct cls c = {.category = category,
			.managed = flags & CG_CF_CLASS_MANAGED,
			.vmm = (flags & CG_CF_CLASS_VMM) != 0};
	if (string_ref(d, span, &c.span) < 0 || (op && string_ref(d, op - 1, &c.op) < 0) ||
	    string_ref(d, device, &c.device) < 0)
		return d->state;
	if (category >= CGTRACE_CAT_COUNT)
		return fail(d, -EBADMSG, "class %u: category %u unknown", d->n_classes, category);
	if (flags & ~(CG_CF_CLASS_MANAGED | CG_CF_CLASS_VMM))
		return fail(d, -EBADMSG, "class %u: unknown flags 0x%02x", d->n_classes, flags);
	uint32_t dev = device_of(d, c.device, false);
	if (dev == UINT32_MAX ||
	    grow((void **)&d->classes, &d->cap_classes, d->n_classes, sizeof(*d->classes)) < 0)
		return fail(d, -ENOMEM, "out of memory");
	c.space = dev * 2 + c.vmm;
	d->classes[d->n_classes++] = c;
	d->p = p;
	return 0;
}

/* Skips an extension area: key/value varint pairs, none of which version 1 knows. */
static int skip_ext(struct cg_cdec *d, const uint8_t **pp, const char *item)
{
	const uint8_t *p = *pp, *end = d->end, *s;
	size_t n;
	GET_BYTES(s, n, item);
	for (const uint8_t *q = s, *e = s + n; q < e;) {
		uint64_t k, v;
		if (cg_varint_get(&q, e, &k) || cg_varint_get(&q, e, &v))
			return fail(d, -EBADMSG, "bad extension area in a %s item", item);
	}
	*pp = p;
	return 0;
}

/*
 * A MEMORY item's extension area: key 1 is its stack id (docs/stacks.md),
 * key 2 its pre-existing mark (1), others are skipped.
 */
static int memory_ext(struct cg_cdec *d, const uint8_t **pp, uint64_t *stack, bool *pre)
{
	const uint8_t *p = *pp, *end = d->end, *s;
	/* The probe's area, key 1 and the stack id alone, read without the loop. */
	if (end - p >= 3 && p[1] == 1 && p[0] >= 2 && p[0] < end - p) {
		const uint8_t *q = p + 2, *e = p + 1 + p[0];
		uint64_t v;
		if (cg_varint_get(&q, e, &v) == 0 && q == e && v) {
			*stack = v;
			*pp = e;
			return 0;
		}
	}
	size_t n;
	GET_BYTES(s, n, "MEMORY");
	for (const uint8_t *q = s, *e = s + n; q < e;) {
		uint64_t k, v;
		if (cg_varint_get(&q, e, &k) || cg_varint_get(&q, e, &v))
			return fail(d, -EBADMSG, "bad extension area in a MEMORY item");
		if (k == CG_CF_EXT_STACK && v == 0)
			return fail(d, -EBADMSG, "stack id 0 in a MEMORY item");
		if (k == CG_CF_EXT_STACK)
			*stack = v;
		if (k == CG_CF_EXT_PREEXISTING && v > 1)
			return fail(d, -EBADMSG, "pre-existing mark %llu in a MEMORY item",
				    (unsigned long long)v);
		if (k == CG_CF_EXT_PREEXISTING)
			*pre = v == 1;
	}
	*pp = p;
	return 0;
}

/*
 * A STACK item (flat: one stack) or a TREE item (stacks on a parent):
 * the rules that need the stacks defined before are the document's, at
 * the record that takes the item.
 */
static int stack_item(struct cg_cdec *d, bool tree)
{
	const uint8_t *p = d->p + 1, *end = d->end;
	const char *item = tree ? "TREE" : "STACK";
	uint64_t id, n, parent = 0, prev = 0;
	GET(id, item);
	if (tree)
		GET(parent, item);
	GET(n, item);
	if (id == 0)
		return fail(d, -EBADMSG, "%s item: stack id 0", item);
	if (n == 0 || n > CG_STACK_FRAMES_MAX)
		return fail(d, -EBADMSG, "%s item: stack %llu has %llu frames (1 to %u)", item,
			    (unsigned long long)id, (unsigned long long)n, CG_STACK_FRAMES_MAX);
	/* A tree's ids run down from id by n - 1; its block's range holds them all. */
	if (d->in_stacks &&
	    (id < d->s_first || id > d->s_last || (tree && id - d->s_first < n - 1)))
		return fail(d, -EBADMSG, "%s item: stack %llu outside its block's ids %llu to %llu",
		            item, (unsigned long long)id, (unsigned long long)d->s_first,
		            (unsigned long long)d->s_last);
	if (cg_pending_has(&d->pend_stacks, id))
		return fail(d, -EBADMSG, "stack %llu defined twice", (unsigned long long)id);
	if (d->pend_stacks.live == PENDING_MAX)
		return fail(d, -EBADMSG, "more than %u stacks wait for their record", PENDING_MAX);
	/*
	 * Without frames kept, a stack with a Python frame keeps its frames all
	 * the same: the document checks that they name defined code objects
	 * (docs/python-frames.md), which light reads must do as full ones do.
	 */
	uint64_t light[CG_STACK_FRAMES_MAX];
	uint64_t *frames =
	    d->no_frames ? light : cg_arena_alloc(&d->pend_mem, (size_t)n * sizeof(*frames));
	if (!frames)
		return fail(d, -ENOMEM, "out of memory");
	uint64_t any = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t z;
		GET(z, item);
		prev += (uint64_t)cg_unzigzag(z);
		frames[i] = prev;
		any |= prev;
	}
	if (d->no_frames) {
		frames = NULL;
		if (any >> 63) {
			frames = cg_arena_alloc(&d->pend_mem, (size_t)n * sizeof(*frames));
			if (!frames)
				return fail(d, -ENOMEM, "out of memory");
			memcpy(frames, light, (size_t)n * sizeof(*frames));
		}
	}
	const struct cg_pending_stack def = {
	    .id = id, .frames = frames, .n = (uint32_t)n, .tree = tree, .parent = parent};
	if (cg_pending_add(&d->pend_stacks, &def) < 0)
		return fail(d, -ENOMEM, "out of memory");
	d->p = p;
	return 0;
}

static bool build_id_ok(const uint8_t *s, size_t n)
{
	if (n % 2 || n > CG_BUILD_ID_HEX_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int module_item(struct cg_cdec *d)
{
	const uint8_t *p = d->p + 1, *end = d->end, *path, *bid;
	size_t n, nb;
	struct cg_modv m;
	GET_BYTES(path, n, "MODULE");
	GET(m.base, "MODULE");
	GET(m.start, "MODULE");
	GET(m.end, "MODULE");
	GET_BYTES(bid, nb, "MODULE");
	if (memchr(path, 0, n))
		return fail(d, -EBADMSG, "MODULE item: the path holds a NUL byte");
	if (m.start > m.end)
		return fail(d, -EBADMSG, "MODULE item: start past end");
	if (!build_id_ok(bid, nb))
		return fail(d, -EBADMSG, "MODULE item: the build id is not lowercase hex digits, "
					 "an even number up to %u", CG_BUILD_ID_HEX_MAX);
	if (d->n_pend_mods == PENDING_MAX)
		return fail(d, -EBADMSG, "more than %u modules wait for their record", PENDING_MAX);
	m.path = store(d, path, n);
	m.build_id = nb ? store(d, bid, nb) : CG_SV_NONE;
	if (!m.path.p || (nb && !m.build_id.p) ||
	    grow((void **)&d->pend_mods, &d->cap_pend_mods, d->n_pend_mods, sizeof(*d->pend_mods)) < 0)
		return fail(d, -ENOMEM, "out of memory");
	d->pend_mods[d->n_pend_mods++] = m;
	d->p = p;
	return 0;
}

/* The pending STACK or TREE item of stack, taken; n 0: none. */
static struct cg_pending_stack take_stack(struct cg_cdec *d, uint64_t stack)
{
	struct cg_pending_stack s;
	cg_pending_take(&d->pend_stacks, stack, &s);
	return s;
}

/*
 * def's frames, which live in the pending items' arena, copied where the
 * record's frames live (until the next record); that arena is emptied
 * once nothing waits in it. -ENOMEM (failed) or 0.
 */
static int keep_frames(struct cg_cdec *d, struct cg_pending_stack *def)
{
	if (!def->frames)
		return 0;
	uint64_t *f = cg_arena_alloc(d->frames_to ? d->frames_to : &d->strs, def->n * sizeof(*f));
	if (!f)
		return fail(d, -ENOMEM, "out of memory");
	memcpy(f, def->frames, def->n * sizeof(*f));
	def->frames = f;
	if (!d->pend_stacks.live)
		cg_arena_reset(&d->pend_mem);
	return 0;
}

/* A packed memory record's stack id, and the pending items it takes. */
static int take_pending(struct cg_cdec *d, struct cg_rec_memory *m, uint64_t stack)
{
	m->stack = stack;
	m->stack_frames = NULL;
	m->n_stack_frames = 0;
	m->has_stack_parent = false;
	m->cgprobe_stack_parent = 0;
	m->modules = NULL;
	m->n_modules = 0;
	struct cg_pending_stack def = stack ? take_stack(d, stack) : (struct cg_pending_stack){0};
	if (keep_frames(d, &def) < 0)
		return d->state;
	m->stack_frames = def.frames;
	m->n_stack_frames = def.n;
	m->has_stack_parent = def.tree;
	m->cgprobe_stack_parent = def.parent;
	if (d->n_pend_mods) {
		/* A copy the record keeps: the next items reuse the pending array. */
		struct cg_modv *v = cg_arena_alloc(&d->strs, d->n_pend_mods * sizeof(*v));
		if (!v)
			return fail(d, -ENOMEM, "out of memory");
		memcpy(v, d->pend_mods, d->n_pend_mods * sizeof(*v));
		m->modules = v;
		m->n_modules = d->n_pend_mods;
		d->n_pend_mods = 0;
	}
	return 0;
}

/* The 8 lowercase hex digits of v, first digit in the lowest byte. */
static inline uint64_t hex8(uint32_t v)
{
	uint64_t x = v;
	/* One nibble a byte, most significant first once byte-swapped. */
	x = ((x & 0xffff0000ull) << 16) | (x & 0xffffull);
	x = ((x & 0x0000ff000000ff00ull) << 8) | (x & 0x000000ff000000ffull);
	x = ((x & 0x00f000f000f000f0ull) << 4) | (x & 0x000f000f000f000full);
	x = __builtin_bswap64(x);
	/* '0' + n, and 'a' - '0' - 10 more where n > 9. */
	uint64_t letters = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
	return x + 0x3030303030303030ull + letters * ('a' - '0' - 10);
}

/*
 * "0x" and the address's hex digits (then "vmm:" before them) end at a
 * fixed place in the buffer, so the view starts where the digits do.
 */
static inline struct cg_sv put_tensor_id(char *ids, bool vmm, uint64_t addr)
{
	char *digits = ids + TENSOR_ID_END - 16;
	uint64_t hi = hex8((uint32_t)(addr >> 32)), lo = hex8((uint32_t)addr);
	memcpy(digits, &hi, 8);
	memcpy(digits + 8, &lo, 8);
	unsigned n = cg_hex_len(addr);
	char *s = digits + 16 - n - 2;
	memcpy(s, "0x", 2);
	if (vmm) {
		s -= 4;
		memcpy(s, "vmm:", 4);
	}
	return (struct cg_sv){s, (uint32_t)(digits + 16 - s)};
}

/* *ts, a packed record's delta, becomes its timestamp: prev_ts + ts, which never wraps. */
static inline int add_ts(struct cg_cdec *d, uint64_t *ts)
{
	uint64_t t;
	if (__builtin_add_overflow(d->prev_ts, *ts, &t))
		return fail(d, -EBADMSG, "timestamp past 2^64 - 1 (%llu after %llu)",
			    (unsigned long long)*ts, (unsigned long long)d->prev_ts);
	*ts = t;
	return 0;
}

static int memory_item(struct cg_cdec *d, struct cg_cdec_out *out)
{
	const uint8_t *p = d->p + 1, *end = d->end;
	uint8_t op = d->p[0];
	uint64_t cid = op & CG_CF_MEM_CLASS, ts, addr, bytes;
	if (cid == CG_CF_MEM_CLASS)
		GET(cid, "MEMORY");
	if (cid >= d->n_classes)
		return fail(d, -EBADMSG, "class %llu not defined", (unsigned long long)cid);
	const struct cls *c = &d->classes[cid];
	GET(ts, "MEMORY");
	if (add_ts(d, &ts) < 0)
		return d->state;
	bool is_free = op & CG_CF_MEM_FREE;
	uint64_t ref;
	GET(ref, "MEMORY");
	if (ref & 1) {
		addr = d->prev_addr + (uint64_t)cg_unzigzag(ref >> 1);
	} else {
		uint64_t k = ref >> 1;
		uint64_t n = d->hist_n < CG_CF_HISTORY ? d->hist_n : CG_CF_HISTORY;
		if (k >= n)
			return fail(d, -EBADMSG,
				    "ref to the address %llu back, the history holds %llu",
				    (unsigned long long)k + 1, (unsigned long long)n);
		addr = d->hist[(d->hist_n - 1 - k) % CG_CF_HISTORY];
	}
	if (!is_free)
		GET(bytes, "MEMORY");
	uint64_t stack = 0;
	bool pre = false;
	if ((op & CG_CF_MEM_EXT) && memory_ext(d, &p, &stack, &pre) < 0)
		return d->state;
	if (pre && is_free)
		return fail(d, -EBADMSG, "pre-existing mark on a free");
	if (!is_free) {
		if (cg_clive_set(&d->live, c->space, addr, bytes, 0) < 0)
			return fail(d, -ENOMEM, "out of memory");
	} else if (!cg_clive_take(&d->live, c->space, addr, &bytes)) {
		char ids[CG_CDEC_IDS];
		struct cg_sv id = put_tensor_id(ids, c->vmm, addr);
		return fail(d, -EBADMSG, "free of %.*s on %.*s, which is not live", (int)id.n,
			    id.p, (int)(c->device.n < 64 ? c->device.n : 64), c->device.p);
	}
	d->hist[d->hist_n++ % CG_CF_HISTORY] = addr;
	d->prev_ts = ts;
	d->prev_addr = addr;
	d->p = p;
	d->records++;
	/* Pre-existing allocs make a class of their own: the view tells them apart. */
	uint8_t bit = is_free ? 2 : pre ? 4 : 1;
	/*
	 * A record that takes pending STACK or MODULE items is yielded whole:
	 * they ride on it. Without frames kept, a stack's definition rides on
	 * the gist.
	 */
	struct cg_pending_stack def = {0};
	if (d->no_frames && stack && d->pend_stacks.live)
		def = take_stack(d, stack);
	/* A stack kept with its Python frames rides whole too: the document checks them. */
	bool takes = d->n_pend_mods || (stack && cg_pending_has(&d->pend_stacks, stack)) ||
		     def.frames;
	bool full = !d->lean || c->vmm || !(c->yielded & bit) || takes;
	*d->dst_mem = (struct cg_cdec_mem){
	    ts, bytes, addr, stack, (uint32_t)cid, c->vmm, is_free, pre, full,
	    def.n, def.tree, def.parent};
	out->rec = d->dst;
	out->mem = d->dst_mem;
	if (!full)
		return CG_CDEC_REC;
	d->classes[cid].yielded |= bit;
	/*
	 * The fields every packed memory record shares are written only when
	 * the target last held another kind (nothing but the decoder writes
	 * targets); field by field, as a compound literal is built aside and
	 * copied.
	 */
	struct cg_rec *r = d->dst;
	struct cg_rec_memory *m = &r->u.memory;
	if (r->kind != CGTRACE_KIND_MEMORY) {
		r->kind = CGTRACE_KIND_MEMORY;
		m->shape = &m->bytes;
		m->dtype = CG_SV_LIT("u8");
		m->cgprobe_device_uuid = m->cgprobe_device_name = CG_SV_NONE;
		m->cgprobe_device_total_bytes = 0;
		m->ndim = 1;
		m->has_device_total = false;
		m->stack = 0;
		m->stack_frames = NULL;
		m->modules = NULL;
		m->n_stack_frames = m->n_modules = 0;
		m->has_stack_parent = false;
	}
	m->timestamp_ns = ts;
	m->span_id = c->span;
	m->op_name = c->op;
	m->device = c->device;
	m->bytes = bytes;
	m->action = is_free ? CGTRACE_FREE : CGTRACE_ALLOC;
	m->category = c->category;
	m->managed = c->managed && !is_free;
	m->cgprobe_preexisting = pre;
	m->tensor_id = put_tensor_id(d->dst_ids, c->vmm, addr);
	if (__builtin_expect(stack || d->n_pend_mods || m->stack || m->n_stack_frames || m->n_modules ||
				 m->has_stack_parent,
			     0) &&
	    take_pending(d, m, stack) < 0)
		return d->state;
	if (def.n) {
		m->n_stack_frames = def.n;
		m->has_stack_parent = def.tree;
		m->cgprobe_stack_parent = def.parent;
		if (keep_frames(d, &def) < 0)
			return d->state;
		m->stack_frames = def.frames;
	}
	return CG_CDEC_REC;
}

/* Writes "s<n>" into buf (1 + 20 bytes); returns it. */
static struct cg_sv put_span_id(char *buf, uint64_t n)
{
	unsigned k = cg_dec_len(n);
	buf[0] = 's';
	cg_put_digits(buf + 1 + k, n);
	return (struct cg_sv){buf, 1 + k};
}

static int span_start_item(struct cg_cdec *d, struct cg_cdec_out *out)
{
	const uint8_t *p = d->p + 1, *end = d->end;
	uint64_t ts, id, parent, name;
	uint8_t kind, step, flags;
	GET(ts, "SPAN_START");
	GET(id, "SPAN_START");
	GET(parent, "SPAN_START");
	GET(name, "SPAN_START");
	GET_U8(kind, "SPAN_START");
	GET_U8(step, "SPAN_START");
	GET_U8(flags, "SPAN_START");
	struct cg_sv name_sv;
	if (string_ref(d, name, &name_sv) < 0)
		return d->state;
	if (kind > CGTRACE_SPAN_MODULE || step > CGTRACE_STEP_OPTIMIZER ||
	    (flags & ~(CG_CF_EXT | CG_CF_SPAN_MEASURED)))
		return fail(d, -EBADMSG, "SPAN_START item: bad kind %u, step %u or flags 0x%02x",
			    kind, step, flags);
	if ((flags & CG_CF_EXT) && skip_ext(d, &p, "SPAN_START") < 0)
		return d->state;
	if (add_ts(d, &ts) < 0)
		return d->state;
	d->prev_ts = ts;
	struct cg_rec *r = d->dst;
	r->kind = CGTRACE_KIND_SPAN_START;
	r->u.span_start = (struct cg_rec_span_start){
		.id = put_span_id(d->dst_ids, id),
		.parent_id = parent ? put_span_id(d->dst_ids + CG_CDEC_ID_MAX, parent - 1)
				    : CG_SV_NONE,
		.name = name_sv,
		.start_ns = d->prev_ts,
		.span_kind = kind,
		.measured = flags & CG_CF_SPAN_MEASURED,
		.step = step,
	};
	d->p = p;
	d->records++;
	out->rec = r;
	return CG_CDEC_REC;
}

static int span_end_item(struct cg_cdec *d, struct cg_cdec_out *out)
{
	const uint8_t *p = d->p + 1, *end = d->end;
	uint64_t id, duration;
	GET(id, "SPAN_END");
	GET(duration, "SPAN_END");
	struct cg_rec *r = d->dst;
	r->kind = CGTRACE_KIND_SPAN_END;
	r->u.span_end = (struct cg_rec_span_end){.id = put_span_id(d->dst_ids, id),
						 .duration_ns = duration};
	d->p = p;
	d->records++;
	out->rec = r;
	return CG_CDEC_REC;
}

static int device_memory_item(struct cg_cdec *d, struct cg_cdec_out *out)
{
	const uint8_t *p = d->p + 1, *end = d->end;
	uint64_t ts, device, used, free_bytes, reserved = 0, oom = 0;
	uint8_t flags;
	GET(ts, "DEVICE_MEMORY");
	GET(device, "DEVICE_MEMORY");
	GET(used, "DEVICE_MEMORY");
	GET(free_bytes, "DEVICE_MEMORY");
	GET_U8(flags, "DEVICE_MEMORY");
	if (flags & ~(CG_CF_EXT | CG_CF_DEVMEM_RESERVED | CG_CF_DEVMEM_OOM))
		return fail(d, -EBADMSG, "DEVICE_MEMORY item: unknown flags 0x%02x", flags);
	if (flags & CG_CF_DEVMEM_RESERVED)
		GET(reserved, "DEVICE_MEMORY");
	if (flags & CG_CF_DEVMEM_OOM)
		GET(oom, "DEVICE_MEMORY");
	if ((flags & CG_CF_EXT) && skip_ext(d, &p, "DEVICE_MEMORY") < 0)
		return d->state;
	struct cg_sv dev;
	if (string_ref(d, device, &dev) < 0)
		return d->state;
	if (add_ts(d, &ts) < 0)
		return d->state;
	d->prev_ts = ts;
	struct cg_rec *r = d->dst;
	r->kind = CGTRACE_KIND_DEVICE_MEMORY;
	r->u.device_memory = (struct cg_rec_device_memory){
		.timestamp_ns = d->prev_ts,
		.device = dev,
		.used_bytes = used,
		.free_bytes = free_bytes,
		.reserved_bytes = reserved,
		.oom_request_bytes = oom,
		.has_reserved = flags & CG_CF_DEVMEM_RESERVED,
		.has_oom_request = (flags & CG_CF_DEVMEM_OOM) != 0,
	};
	d->p = p;
	d->records++;
	out->rec = r;
	return CG_CDEC_REC;
}

/*
 * A TEXT memory record updates the live table as a packed one does. Only
 * its kind, action, device and tensor_id matter; a line that does not
 * parse is left alone here, its reader reports it.
 */
static int text_live(struct cg_cdec *d, const char *s, size_t n)
{
	if (!memmem(s, n, "memory", 6) && !memchr(s, '\\', n))
		return 0;
	cg_arena_reset(&d->parse.arena);
	if (cg_parse_fast(&d->parse, s, n, &d->text) != 0 &&
	    cg_parse_ref(&d->parse, s, n, &d->text) != 0)
		return 0;
	const struct cg_rec_memory *m = &d->text.u.memory;
	bool vmm;
	uint64_t addr, bytes;
	if (d->text.kind != CGTRACE_KIND_MEMORY || !cg_scan_hex_id(m->tensor_id.p, m->tensor_id.n, &vmm, &addr))
		return 0;
	uint32_t dev = device_of(d, m->device, true);
	if (dev == UINT32_MAX)
		return fail(d, -ENOMEM, "out of memory");
	if (m->action == CGTRACE_FREE)
		cg_clive_take(&d->live, dev * 2 + vmm, addr, &bytes);
	else if (cg_clive_set(&d->live, dev * 2 + vmm, addr, m->bytes, 0) < 0)
		return fail(d, -ENOMEM, "out of memory");
	return 0;
}

static int text_item(struct cg_cdec *d, struct cg_cdec_out *out)
{
	const uint8_t *p = d->p + 1, *end = d->end, *s;
	size_t n;
	GET_BYTES(s, n, "TEXT");
	/* One record as one line: a JSONL reader would split a newline, skip a blank line. */
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	if (i == n)
		return fail(d, -EBADMSG, "TEXT item holds no record");
	if (memchr(s, '\n', n))
		return fail(d, -EBADMSG, "TEXT item holds a newline");
	if (text_live(d, (const char *)s, n) < 0)
		return d->state;
	d->p = p;
	d->records++;
	out->line = (const char *)s;
	out->len = n;
	return CG_CDEC_TEXT;
}

static int small_item(struct cg_cdec *d, uint8_t op)
{
	const uint8_t *p = d->p + 1, *end = d->end, *s;
	size_t n;
	if (op == CG_CF_OP_THREAD) {
		GET(d->thread, "THREAD");
		if (d->n_blk_threads < CG_CF_BLOCK_THREADS)
			d->blk_threads[d->n_blk_threads++] = d->thread;
	} else if (op >= CG_CF_OP_THREAD_AGAIN && op < CG_CF_OP_THREAD_AGAIN + CG_CF_BLOCK_THREADS) {
		unsigned i = op - CG_CF_OP_THREAD_AGAIN;
		if (i >= d->n_blk_threads)
			return fail(d, -EBADMSG, "THREAD_AGAIN %u: the block's THREAD items named %u", i,
				    d->n_blk_threads);
		d->thread = d->blk_threads[i];
	} else if (op >= CG_CF_OP_SKIP_FIRST) {
		GET_BYTES(s, n, "reserved");
		(void)s;
		(void)n;
	} else {
		return fail(d, -EBADMSG, "unknown opcode 0x%02x", op);
	}
	d->p = p;
	return 0;
}

int cg_cdec_next(struct cg_cdec *d, struct cg_cdec_out *out)
{
	out->mem = NULL;
	if (d->state <= 0)
		return d->state;
	if (!d->header_done) {
		int r = read_header(d);
		if (r <= 0)
			return r;
	}
	for (;;) {
		if (d->p == d->end) {
			int r = load_block(d);
			if (r <= 0)
				return r;
			if (r == CG_CDEC_STACKS) {
				out->stacks_first = d->s_first;
				out->stacks_last = d->s_last;
				return r;
			}
			continue;
		}
		uint8_t op = *d->p;
		int r;
		if (d->in_stacks && op != CG_CF_OP_STACK && op != CG_CF_OP_TREE)
			return fail(d, -EBADMSG, "item %02x in a stack block (only STACK and TREE)",
			            op);
		if (op >= CG_CF_OP_MEMORY)
			return memory_item(d, out);
		switch (op) {
		case CG_CF_OP_SPAN_START:
			return span_start_item(d, out);
		case CG_CF_OP_SPAN_END:
			return span_end_item(d, out);
		case CG_CF_OP_DEVICE_MEMORY:
			return device_memory_item(d, out);
		case CG_CF_OP_TEXT:
			return text_item(d, out);
		case CG_CF_OP_STRING:
			r = string_item(d);
			break;
		case CG_CF_OP_CLASS:
			r = class_item(d);
			break;
		case CG_CF_OP_STACK:
		case CG_CF_OP_TREE:
			r = stack_item(d, op == CG_CF_OP_TREE);
			break;
		case CG_CF_OP_MODULE:
			r = module_item(d);
			break;
		default:
			r = small_item(d, op);
			break;
		}
		if (r < 0)
			return r;
	}
}

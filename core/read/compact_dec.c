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
#include "compact_live.h"
#include "crc32.h"
#include "fmt_int.h"
#include "hash.h"
#include "parse_fast.h"
#include "parse_ref.h"
#include "u64map.h"
#include "utf8.h"
#include "varint.h"

#define HEADER_LEN 16
#define BLOCK_HEADER_LEN 16
#define RAW_MAX (64u << 20)
#define PAYLOAD_SLACK 65536u
#define HISTORY 4096u
#define READ_STEP (1u << 20)

enum {
	OP_STRING = 0x01,
	OP_THREAD = 0x02,
	OP_TEXT = 0x03,
	OP_CLASS = 0x05,
	OP_SPAN_START = 0x10,
	OP_SPAN_END = 0x11,
	OP_DEVICE_MEMORY = 0x12,
	OP_SKIP_FIRST = 0x40,
	OP_MEMORY = 0x80,
};

#define MEM_FREE 0x40
#define MEM_EXT 0x20
#define MEM_CLASS 0x1f

#define CLASS_MANAGED 1u
#define CLASS_VMM 2u

struct cls {
	struct cg_sv span, op, device;
	uint32_t space; /* live-table space: device number * 2, + 1 with vmm: */
	uint8_t category;
	bool managed, vmm;
};

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

	/* Block state. */
	uint64_t prev_ts, prev_addr, thread;
	uint64_t hist[HISTORY];
	uint64_t hist_n;

	/* Output. */
	struct cg_rec memrec, span_start, span_end, devmem, text;
	char tensor_id[4 + 2 + 16];
	char span_id[1 + 20], parent_id[1 + 20];
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
	struct cg_rec_memory *m = &d->memrec.u.memory;
	d->memrec.kind = CGTRACE_KIND_MEMORY;
	m->shape = &m->bytes;
	m->ndim = 1;
	m->dtype = CG_SV_LIT("u8");
	m->tensor_id.p = d->tensor_id;
	d->span_start.kind = CGTRACE_KIND_SPAN_START;
	d->span_start.u.span_start.id.p = d->span_id;
	d->span_end.kind = CGTRACE_KIND_SPAN_END;
	d->span_end.u.span_end.id.p = d->span_id;
	d->devmem.kind = CGTRACE_KIND_DEVICE_MEMORY;
	d->span_id[0] = d->parent_id[0] = 's';
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
	free(d->strings);
	free(d->classes);
	free(d->devices);
	cg_map_free(&d->device_map);
	cg_clive_fini(&d->live);
	cg_parse_fini(&d->parse);
	free(d);
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

uint64_t cg_cdec_thread(const struct cg_cdec *d)
{
	return d->thread;
}

bool cg_cdec_sniff(const void *p, size_t n)
{
	return n > 0 && memcmp(p, CG_COMPACT_MAGIC, n < CG_COMPACT_MAGIC_LEN ? n : CG_COMPACT_MAGIC_LEN) == 0;
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

static int end_truncated(struct cg_cdec *d)
{
	d->truncated = true;
	d->state = 0;
	return 0;
}

static int read_header(struct cg_cdec *d)
{
	uint8_t small[HEADER_LEN];
	const uint8_t *h;
	int r = take(d, HEADER_LEN, small, &h);
	if (r < 0)
		return r == -ENOMEM ? fail(d, r, "out of memory") : io_fail(d, r);
	size_t have = r ? HEADER_LEN : (size_t)d->pos;
	if (!cg_cdec_sniff(h, have < CG_COMPACT_MAGIC_LEN ? have : CG_COMPACT_MAGIC_LEN))
		return fail(d, -EBADMSG, "not a compact trace (bad magic)");
	if (!r)
		return end_truncated(d);
	uint32_t version = le32(h + 8);
	if (version != 1)
		return fail(d, -EBADMSG, "compact encoding version %u is not supported (only 1)",
			    version);
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
		return fail(d, -EBADMSG, "block at byte %llu: decompresses to %zu bytes, raw_len %u",
			    (unsigned long long)at, got, raw_len);
	d->p = d->raw;
	d->end = d->raw + raw_len;
	return 1;
}

/* Loads the next block: 1, 0 at the end (clean or cut), or an error. */
static int load_block(struct cg_cdec *d)
{
	uint64_t at = d->pos;
	uint8_t small[BLOCK_HEADER_LEN];
	const uint8_t *h;
	int r = take(d, BLOCK_HEADER_LEN, small, &h);
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
	if ((type != 'Z' && type != 'R') || h[1] || h[2] || h[3])
		return fail(d, -EBADMSG, "block at byte %llu: bad block type %02x %02x %02x %02x",
			    (unsigned long long)at, h[0], h[1], h[2], h[3]);
	if (raw_len > RAW_MAX)
		return fail(d, -EBADMSG, "block at byte %llu: raw_len %u over the limit of %u",
			    (unsigned long long)at, raw_len, RAW_MAX);
	if ((type == 'R' && plen != raw_len) || (uint64_t)plen > (uint64_t)raw_len + PAYLOAD_SLACK)
		return fail(d, -EBADMSG, "block at byte %llu: payload_len %u does not fit raw_len %u",
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
	d->hist_n = 0;
	if (type == 'Z')
		return decompress(d, at, payload, plen, raw_len);
	d->p = payload;
	d->end = payload + plen;
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

/* A varint at *p, one byte inline (most are), else the full reader. */
static inline int get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	if (*p < end && **p < 0x80) {
		*v = *(*p)++;
		return 0;
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
			.managed = flags & CLASS_MANAGED,
			.vmm = (flags & CLASS_VMM) != 0};
	if (string_ref(d, span, &c.span) < 0 || (op && string_ref(d, op - 1, &c.op) < 0) ||
	    string_ref(d, device, &c.device) < 0)
		return d->state;
	if (category >= CGTRACE_CAT_COUNT)
		return fail(d, -EBADMSG, "class %u: category %u unknown", d->n_classes, category);
	if (flags & ~(CLASS_MANAGED | CLASS_VMM))
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

static void put_tensor_id(struct cg_cdec *d, bool vmm, uint64_t addr)
{
	char *w = d->tensor_id;
	if (vmm) {
		memcpy(w, "vmm:", 4);
		w += 4;
	}
	memcpy(w, "0x", 2);
	unsigned n = cg_hex_len(addr);
	cg_put_hex(w + 2, addr, n);
	d->memrec.u.memory.tensor_id.n = (uint32_t)(w + 2 + n - d->tensor_id);
}

static int memory_item(struct cg_cdec *d, struct cg_cdec_out *out)
{
	const uint8_t *p = d->p + 1, *end = d->end;
	uint8_t op = d->p[0];
	uint64_t cid = op & MEM_CLASS, ts, addr, bytes;
	if (cid == MEM_CLASS)
		GET(cid, "MEMORY");
	if (cid >= d->n_classes)
		return fail(d, -EBADMSG, "class %llu not defined", (unsigned long long)cid);
	const struct cls *c = &d->classes[cid];
	GET(ts, "MEMORY");
	ts += d->prev_ts;
	bool is_free = op & MEM_FREE;
	if (!is_free) {
		uint64_t z;
		GET(z, "MEMORY");
		addr = d->prev_addr + (uint64_t)cg_unzigzag(z);
		GET(bytes, "MEMORY");
	} else {
		uint64_t ref;
		GET(ref, "MEMORY");
		if (ref & 1) {
			addr = d->prev_addr + (uint64_t)cg_unzigzag(ref >> 1);
		} else {
			uint64_t k = ref >> 1, n = d->hist_n < HISTORY ? d->hist_n : HISTORY;
			if (k >= n)
				return fail(d, -EBADMSG,
					    "free refers to alloc %llu back, the block has %llu",
					    (unsigned long long)k + 1, (unsigned long long)n);
			addr = d->hist[(d->hist_n - 1 - k) % HISTORY];
		}
	}
	if ((op & MEM_EXT) && skip_ext(d, &p, "MEMORY") < 0)
		return d->state;
	put_tensor_id(d, c->vmm, addr);
	struct cg_rec_memory *m = &d->memrec.u.memory;
	if (!is_free) {
		if (cg_clive_set(&d->live, c->space, addr, bytes) < 0)
			return fail(d, -ENOMEM, "out of memory");
		d->hist[d->hist_n++ % HISTORY] = addr;
	} else if (!cg_clive_take(&d->live, c->space, addr, &bytes)) {
		return fail(d, -EBADMSG, "free of %.*s on %.*s, which is not live",
			    (int)m->tensor_id.n, m->tensor_id.p, (int)(c->device.n < 64 ? c->device.n : 64),
			    c->device.p);
	}
	d->prev_ts = ts;
	d->prev_addr = addr;
	m->timestamp_ns = ts;
	m->span_id = c->span;
	m->op_name = c->op;
	m->device = c->device;
	m->bytes = bytes;
	m->action = is_free ? CGTRACE_FREE : CGTRACE_ALLOC;
	m->category = c->category;
	m->managed = c->managed && !is_free;
	d->p = p;
	d->records++;
	out->rec = &d->memrec;
	return CG_CDEC_REC;
}

/* Writes "s<n>" into buf (1 + 20 bytes); returns its length. */
static uint32_t put_span_id(char *buf, uint64_t n)
{
	unsigned k = cg_dec_len(n);
	cg_put_digits(buf + 1 + k, n);
	return 1 + k;
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
	struct cg_rec_span_start *s = &d->span_start.u.span_start;
	if (string_ref(d, name, &s->name) < 0)
		return d->state;
	if (kind > CGTRACE_SPAN_MODULE || step > CGTRACE_STEP_OPTIMIZER || (flags & 0x7e))
		return fail(d, -EBADMSG, "SPAN_START item: bad kind %u, step %u or flags 0x%02x",
			    kind, step, flags);
	if ((flags & 0x80) && skip_ext(d, &p, "SPAN_START") < 0)
		return d->state;
	d->prev_ts += ts;
	s->start_ns = d->prev_ts;
	s->id.n = put_span_id(d->span_id, id);
	s->parent_id = parent ? (struct cg_sv){d->parent_id, put_span_id(d->parent_id, parent - 1)}
			      : CG_SV_NONE;
	s->span_kind = kind;
	s->step = step;
	s->measured = flags & 1;
	d->p = p;
	d->records++;
	out->rec = &d->span_start;
	return CG_CDEC_REC;
}

static int span_end_item(struct cg_cdec *d, struct cg_cdec_out *out)
{
	const uint8_t *p = d->p + 1, *end = d->end;
	uint64_t id, duration;
	GET(id, "SPAN_END");
	GET(duration, "SPAN_END");
	struct cg_rec_span_end *s = &d->span_end.u.span_end;
	s->id.n = put_span_id(d->span_id, id);
	s->duration_ns = duration;
	d->p = p;
	d->records++;
	out->rec = &d->span_end;
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
	if (flags & 0x7c)
		return fail(d, -EBADMSG, "DEVICE_MEMORY item: unknown flags 0x%02x", flags);
	if (flags & 1)
		GET(reserved, "DEVICE_MEMORY");
	if (flags & 2)
		GET(oom, "DEVICE_MEMORY");
	if ((flags & 0x80) && skip_ext(d, &p, "DEVICE_MEMORY") < 0)
		return d->state;
	struct cg_rec_device_memory *m = &d->devmem.u.device_memory;
	if (string_ref(d, device, &m->device) < 0)
		return d->state;
	d->prev_ts += ts;
	m->timestamp_ns = d->prev_ts;
	m->used_bytes = used;
	m->free_bytes = free_bytes;
	m->has_reserved = flags & 1;
	m->reserved_bytes = reserved;
	m->has_oom_request = (flags & 2) != 0;
	m->oom_request_bytes = oom;
	d->p = p;
	d->records++;
	out->rec = &d->devmem;
	return CG_CDEC_REC;
}

/* The address of a tensor_id a packed record could have written: "0x" hex, no leading zero. */
static bool canonical_id(struct cg_sv id, bool *vmm, uint64_t *addr)
{
	const char *s = id.p;
	size_t n = id.n;
	*vmm = n > 4 && memcmp(s, "vmm:", 4) == 0;
	if (*vmm)
		s += 4, n -= 4;
	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x' || (s[2] == '0' && n > 3))
		return false;
	uint64_t v = 0;
	for (size_t i = 2; i < n; i++) {
		char c = s[i];
		unsigned x = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
						    : 16;
		if (x == 16)
			return false;
		v = v << 4 | x;
	}
	*addr = v;
	return true;
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
	if (d->text.kind != CGTRACE_KIND_MEMORY || !canonical_id(m->tensor_id, &vmm, &addr))
		return 0;
	uint32_t dev = device_of(d, m->device, true);
	if (dev == UINT32_MAX)
		return fail(d, -ENOMEM, "out of memory");
	if (m->action == CGTRACE_FREE)
		cg_clive_take(&d->live, dev * 2 + vmm, addr, &bytes);
	else if (cg_clive_set(&d->live, dev * 2 + vmm, addr, m->bytes) < 0)
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
	if (op == OP_THREAD) {
		GET(d->thread, "THREAD");
	} else if (op >= OP_SKIP_FIRST) {
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
			continue;
		}
		uint8_t op = *d->p;
		int r;
		if (op >= OP_MEMORY)
			return memory_item(d, out);
		switch (op) {
		case OP_SPAN_START:
			return span_start_item(d, out);
		case OP_SPAN_END:
			return span_end_item(d, out);
		case OP_DEVICE_MEMORY:
			return device_memory_item(d, out);
		case OP_TEXT:
			return text_item(d, out);
		case OP_STRING:
			r = string_item(d);
			break;
		case OP_CLASS:
			r = class_item(d);
			break;
		default:
			r = small_item(d, op);
			break;
		}
		if (r < 0)
			return r;
	}
}

/* SPDX-License-Identifier: MIT */
#include "cfi.h"

#include <stdbool.h>
#include <string.h>

#if CG_CFI_FAST
#include <dlfcn.h>
#endif

#include "varint.h"

/* DWARF registers of x86-64 (System V psABI, figure 3.36). */
#define REG_RBP 6
#define REG_RSP 7

/* Pointer encodings (LSB, .eh_frame). */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80
#define PE_DATAREL_SDATA4 0x3b /* .eh_frame_hdr's searchable table */

/* remember_state nesting kept; deeper is a rule left to libunwind. */
#define STATE_DEPTH 8

struct reader {
	const uint8_t *p, *end;
	bool bad;
};

/* An unsigned LEB128: the compact encoding's varint, read the same way. */
static uint64_t uleb(struct reader *r)
{
	uint64_t v;
	if (cg_varint_get(&r->p, r->end, &v) == 0)
		return v;
	r->bad = true;
	r->p = r->end;
	return 0;
}

static int64_t sleb(struct reader *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (r->p < r->end && shift < 64) {
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~0ull << shift;
			return (int64_t)v;
		}
	}
	r->bad = true;
	return 0;
}

/* n bytes, little-endian as the machine; unsigned. */
static uint64_t fixed(struct reader *r, unsigned n)
{
	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	uint64_t v = 0;
	memcpy(&v, r->p, n);
	r->p += n;
	return v;
}

/* An encoded pointer; datarel is the base DW_EH_PE_datarel counts from (0: none). */
static uint64_t pointer(struct reader *r, uint8_t enc, uintptr_t datarel)
{
	uintptr_t at = (uintptr_t)r->p;
	uint64_t v;
	switch (enc & PE_FORMAT) {
	case 0x00:
		v = fixed(r, 8);
		break;
	case 0x01:
		v = uleb(r);
		break;
	case 0x02:
		v = fixed(r, 2);
		break;
	case 0x03:
		v = fixed(r, 4);
		break;
	case 0x04:
		v = fixed(r, 8);
		break;
	case 0x09:
		v = (uint64_t)sleb(r);
		break;
	case 0x0a:
		v = (uint64_t)(int64_t)(int16_t)fixed(r, 2);
		break;
	case 0x0b:
		v = (uint64_t)(int64_t)(int32_t)fixed(r, 4);
		break;
	case 0x0c:
		v = fixed(r, 8);
		break;
	default:
		r->bad = true;
		return 0;
	}
	switch (enc & PE_APPLY) {
	case 0:
		break;
	case PE_PCREL:
		v += at;
		break;
	case PE_DATAREL:
		if (!datarel)
			r->bad = true;
		v += datarel;
		break;
	default: /* textrel, funcrel, aligned: not used on x86-64 */
		r->bad = true;
		return 0;
	}
	if (enc & PE_INDIRECT) {
		if (r->bad || !v)
			return r->bad = true, 0;
		memcpy(&v, (const void *)(uintptr_t)v, 8);
	}
	return v;
}

/* What the interpreter keeps of a row: the CFA, rbp's rule and the return address's. */
enum reg_rule { SAME, OFFSET, UNDEF, OTHER };

struct row {
	uint64_t cfa_reg;
	int64_t cfa_off;
	bool cfa_set, cfa_expr;
	uint8_t bp, ra; /* enum reg_rule */
	int64_t bp_off, ra_off;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool aug_z, signal;
	const uint8_t *insns, *end;
};

struct interp {
	struct row row, initial;
	struct row saved[STATE_DEPTH];
	unsigned depth;
	const struct cie *cie;
	uintptr_t pc, loc;
	bool done; /* the location passed pc: the row is the rule at pc */
};

static void set_rule(struct interp *in, uint64_t reg, enum reg_rule rule, int64_t off)
{
	if (reg == REG_RBP) {
		in->row.bp = (uint8_t)rule;
		in->row.bp_off = off;
	}
	if (reg == in->cie->ra_reg) {
		in->row.ra = (uint8_t)rule;
		in->row.ra_off = off;
	}
}

static void restore_rule(struct interp *in, uint64_t reg)
{
	if (reg == REG_RBP) {
		in->row.bp = in->initial.bp;
		in->row.bp_off = in->initial.bp_off;
	}
	if (reg == in->cie->ra_reg) {
		in->row.ra = in->initial.ra;
		in->row.ra_off = in->initial.ra_off;
	}
}

/* DW_CFA_def_cfa and its _sf form: a register and offset, replacing any expression. */
static void def_cfa(struct interp *in, uint64_t reg, int64_t off)
{
	in->row.cfa_reg = reg;
	in->row.cfa_off = off;
	in->row.cfa_set = true;
	in->row.cfa_expr = false;
}

static void advance(struct interp *in, uint64_t to)
{
	if (to > in->pc)
		in->done = true;
	else
		in->loc = to;
}

static void skip_block(struct reader *r)
{
	uint64_t n = uleb(r);
	if (n > (uint64_t)(r->end - r->p))
		r->bad = true, r->p = r->end;
	else
		r->p += n;
}

/* One instruction; false for one this reader does not know. */
static bool step(struct interp *in, struct reader *r)
{
	const struct cie *c = in->cie;
	uint8_t op = *r->p++;
	uint64_t reg;
	switch (op & 0xc0) {
	case 0x40: /* advance_loc */
		advance(in, in->loc + (op & 0x3f) * c->code_align);
		return true;
	case 0x80: /* offset */
		set_rule(in, op & 0x3f, OFFSET, (int64_t)uleb(r) * c->data_align);
		return true;
	case 0xc0: /* restore */
		restore_rule(in, op & 0x3f);
		return true;
	}
	switch (op) {
	case 0x00: /* nop */
		return true;
	case 0x01: /* set_loc */
		advance(in, pointer(r, c->fde_enc, 0));
		return true;
	case 0x02:
	case 0x03:
	case 0x04: /* advance_loc1, 2, 4 */
		advance(in, in->loc + fixed(r, op == 0x02   ? 1
		                               : op == 0x03 ? 2
		                                            : 4) *
		                          c->code_align);
		return true;
	case 0x05: /* offset_extended */
		reg = uleb(r);
		set_rule(in, reg, OFFSET, (int64_t)uleb(r) * c->data_align);
		return true;
	case 0x06: /* restore_extended */
		restore_rule(in, uleb(r));
		return true;
	case 0x07: /* undefined */
		set_rule(in, uleb(r), UNDEF, 0);
		return true;
	case 0x08: /* same_value */
		set_rule(in, uleb(r), SAME, 0);
		return true;
	case 0x09: /* register */
	case 0x14: /* val_offset */
		reg = uleb(r);
		(void)uleb(r);
		set_rule(in, reg, OTHER, 0);
		return true;
	case 0x0a: /* remember_state */
		if (in->depth == STATE_DEPTH)
			return false;
		in->saved[in->depth++] = in->row;
		return true;
	case 0x0b: /* restore_state: the CFA too, as GCC and libunwind read it */
		if (in->depth == 0)
			return false;
		in->row = in->saved[--in->depth];
		return true;
	case 0x0c: /* def_cfa */
		reg = uleb(r);
		def_cfa(in, reg, (int64_t)uleb(r));
		return true;
	case 0x0d: /* def_cfa_register */
		in->row.cfa_reg = uleb(r);
		return true;
	case 0x0e: /* def_cfa_offset */
		in->row.cfa_off = (int64_t)uleb(r);
		return true;
	case 0x0f: /* def_cfa_expression */
		skip_block(r);
		in->row.cfa_expr = true;
		return true;
	case 0x10: /* expression */
	case 0x16: /* val_expression */
		reg = uleb(r);
		skip_block(r);
		set_rule(in, reg, OTHER, 0);
		return true;
	case 0x11: /* offset_extended_sf */
		reg = uleb(r);
		set_rule(in, reg, OFFSET, sleb(r) * c->data_align);
		return true;
	case 0x12: /* def_cfa_sf */
		reg = uleb(r);
		def_cfa(in, reg, sleb(r) * c->data_align);
		return true;
	case 0x13: /* def_cfa_offset_sf */
		in->row.cfa_off = sleb(r) * c->data_align;
		return true;
	case 0x15: /* val_offset_sf */
		reg = uleb(r);
		(void)sleb(r);
		set_rule(in, reg, OTHER, 0);
		return true;
	case 0x2e: /* GNU_args_size */
		(void)uleb(r);
		return true;
	case 0x2f: /* GNU_negative_offset_extended */
		reg = uleb(r);
		set_rule(in, reg, OFFSET, -(int64_t)uleb(r) * c->data_align);
		return true;
	default:
		return false;
	}
}

static bool run(struct interp *in, const uint8_t *p, const uint8_t *end)
{
	struct reader r = {p, end, false};
	while (r.p < r.end && !in->done) {
		if (!step(in, &r) || r.bad)
			return false;
	}
	return true;
}

static bool parse_cie(const uint8_t *p, struct cie *c)
{
	uint32_t len;
	memcpy(&len, p, 4);
	if (len == 0 || len == 0xffffffffu)
		return false;
	struct reader r = {p + 4, p + 4 + len, false};
	if (fixed(&r, 4) != 0) /* a CIE's id in .eh_frame */
		return false;
	uint64_t version = fixed(&r, 1);
	const char *aug = (const char *)r.p;
	size_t aug_len = strnlen(aug, (size_t)(r.end - r.p));
	r.p += aug_len + 1;
	if (r.p > r.end || (version != 1 && version != 3 && version != 4))
		return false;
	if (version == 4) /* address and segment selector sizes */
		r.p += 2;
	memset(c, 0, sizeof(*c));
	c->code_align = uleb(&r);
	c->data_align = sleb(&r);
	c->ra_reg = version == 1 ? fixed(&r, 1) : uleb(&r);
	c->fde_enc = 0; /* absptr unless 'R' says otherwise */
	const uint8_t *aug_end = NULL;
	for (size_t i = 0; i < aug_len; i++) {
		switch (aug[i]) {
		case 'z': {
			if (i != 0)
				return false;
			c->aug_z = true;
			uint64_t n = uleb(&r);
			aug_end = r.p + n;
			break;
		}
		case 'R':
			c->fde_enc = (uint8_t)fixed(&r, 1);
			break;
		case 'P': {
			uint8_t enc = (uint8_t)fixed(&r, 1);
			(void)pointer(&r, enc & ~PE_INDIRECT, 0);
			break;
		}
		case 'L':
			(void)fixed(&r, 1);
			break;
		case 'S':
			c->signal = true;
			break;
		default:
			/* Unknown letters past 'z' are skipped by the augmentation's length. */
			if (!c->aug_z)
				return false;
			i = aug_len;
			break;
		}
	}
	if (c->aug_z)
		r.p = aug_end;
	if (r.bad || r.p > r.end)
		return false;
	c->insns = r.p;
	c->end = r.end;
	return true;
}

#if CG_CFI_FAST
/* The FDE whose range holds pc, by the binary-search table of .eh_frame_hdr; NULL for none. */
static const uint8_t *find_fde(uintptr_t pc)
{
	struct dl_find_object fo;
	if (_dl_find_object((void *)pc, &fo) != 0 || !fo.dlfo_eh_frame)
		return NULL;
	const uint8_t *hdr = fo.dlfo_eh_frame;
	if (hdr[0] != 1 || hdr[3] != PE_DATAREL_SDATA4 || hdr[2] == PE_OMIT)
		return NULL;
	/* Bounds are the module's: the header's fields are read as the loader mapped them. */
	struct reader r = {hdr + 4, hdr + 4 + 32, false};
	(void)pointer(&r, hdr[1], (uintptr_t)hdr);
	uint64_t count = pointer(&r, hdr[2], (uintptr_t)hdr);
	if (r.bad || count == 0)
		return NULL;
	const uint8_t *table = r.p;
	int64_t rel = (int64_t)pc - (int64_t)(uintptr_t)hdr;
	uint64_t lo = 0, hi = count;
	/* The last entry starting at or before pc. */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		int32_t start;
		memcpy(&start, table + mid * 8, 4);
		if (start <= rel)
			lo = mid;
		else
			hi = mid;
	}
	int32_t start, fde;
	memcpy(&start, table + lo * 8, 4);
	memcpy(&fde, table + lo * 8 + 4, 4);
	if (start > rel)
		return NULL;
	return hdr + fde;
}

static uint8_t fill(const struct row *row, const struct cie *c, struct cg_cfi_rule *out)
{
	if (row->ra == UNDEF)
		return CG_CFI_OUTERMOST;
	if (c->signal || !row->cfa_set || row->cfa_expr ||
	    (row->cfa_reg != REG_RSP && row->cfa_reg != REG_RBP))
		return CG_CFI_OTHER;
	if (row->ra != OFFSET || row->ra_off != -8)
		return CG_CFI_OTHER;
	if (row->cfa_off <= 0 || row->cfa_off > INT32_MAX)
		return CG_CFI_OTHER;
	if (row->bp == OFFSET) {
		if (row->bp_off == 0 || row->bp_off < INT16_MIN || row->bp_off > INT16_MAX)
			return CG_CFI_OTHER;
		out->bp_off = (int16_t)row->bp_off;
	} else if (row->bp != SAME) {
		return CG_CFI_OTHER;
	}
	out->cfa_off = (int32_t)row->cfa_off;
	out->cfa_bp = row->cfa_reg == REG_RBP;
	return CG_CFI_STEP;
}

static uint8_t rule_at(uintptr_t pc, struct cg_cfi_rule *out)
{
	const uint8_t *fde = find_fde(pc);
	if (!fde)
		return CG_CFI_OTHER;
	uint32_t len, cie_off;
	memcpy(&len, fde, 4);
	if (len == 0 || len == 0xffffffffu)
		return CG_CFI_OTHER;
	memcpy(&cie_off, fde + 4, 4);
	struct cie c;
	if (cie_off == 0 || !parse_cie(fde + 4 - cie_off, &c))
		return CG_CFI_OTHER;
	struct reader r = {fde + 8, fde + 4 + len, false};
	uint64_t begin = pointer(&r, c.fde_enc, 0);
	uint64_t range = pointer(&r, c.fde_enc & PE_FORMAT, 0);
	if (c.aug_z)
		skip_block(&r);
	if (r.bad || pc < begin || pc - begin >= range)
		return CG_CFI_OTHER;
	struct interp in = {.cie = &c, .pc = pc, .loc = begin};
	in.row.bp = SAME;
	in.row.ra = OTHER;
	if (!run(&in, c.insns, c.end))
		return CG_CFI_OTHER;
	in.initial = in.row;
	in.depth = 0;
	in.done = false;
	if (!run(&in, r.p, r.end))
		return CG_CFI_OTHER;
	return fill(&in.row, &c, out);
}
#endif

void cg_cfi_rule(uintptr_t pc, struct cg_cfi_rule *r)
{
	memset(r, 0, sizeof(*r));
#if CG_CFI_FAST
	r->kind = rule_at(pc, r);
#else
	(void)pc;
	r->kind = CG_CFI_OTHER;
#endif
}

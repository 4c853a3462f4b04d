/* SPDX-License-Identifier: MIT */
/*
 * A module's function symbols sorted by address (symtab.h). Only symbols
 * with a size are kept: an address is named by a symbol only inside
 * [value, value + size), so code past a function's end (padding, or a
 * hidden function a stripped library lists no symbol for) never takes the
 * name of the export before it, as a nearest-symbol search would give it.
 */
#include "symtab.h"

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#define NO_OUTER UINT32_MAX

/* A kept symbol while the table is sorted: its rank among aliases, its place in the ELF table. */
struct sym_sort {
	uint64_t addr, end;
	const char *name;
	unsigned rank;
	uint32_t order;
};

/* Functions, and assembly symbols given a size without a type; never a zero size. */
static bool kept(const struct cg_sym_in *s)
{
	return s->size > 0 && s->name && s->name[0] &&
	       (s->type == STT_FUNC || s->type == STT_GNU_IFUNC || s->type == STT_NOTYPE);
}

/*
 * Among aliases at one address, the lower rank names it: a typed symbol
 * before an untyped one (as addr2line), then GLOBAL, WEAK, LOCAL (as
 * libdwfl: the name others call it by); the ELF table's order after that.
 */
static unsigned alias_rank(const struct cg_sym_in *s)
{
	unsigned bind = s->bind == STB_GLOBAL || s->bind == STB_GNU_UNIQUE ? 0
	                : s->bind == STB_WEAK                              ? 1
	                : s->bind == STB_LOCAL                             ? 2
	                                                                   : 3;
	return (s->type == STT_NOTYPE ? 4u : 0u) + bind;
}

static int by_addr_then_rank(const void *pa, const void *pb)
{
	const struct sym_sort *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/*
 * One address's aliases, best first, into out: each kept only where it
 * reaches past every better one (a longer alias names what the best one
 * does not cover), laid out longest first so that the best comes last,
 * where the search lands. Returns how many.
 */
static size_t put_group(const struct sym_sort *g, size_t n, struct cg_sym *out)
{
	size_t k = 0;
	uint64_t reach = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && g[i].end <= reach)
			continue;
		reach = g[i].end;
		out[k++] = (struct cg_sym){g[i].addr, g[i].end, g[i].name, NO_OUTER};
	}
	for (size_t i = 0; i < k / 2; i++) {
		struct cg_sym t = out[i];
		out[i] = out[k - 1 - i];
		out[k - 1 - i] = t;
	}
	return k;
}

/*
 * Each symbol's outer one: the nearest before it still covering its
 * address. The chain from the symbol before skips only symbols that end
 * at or before this address, which no later symbol's chain passes again:
 * linear in all.
 */
static void link_outer(struct cg_sym *s, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint32_t j = (uint32_t)(i - 1);
		while (j != NO_OUTER && s[j].end <= s[i].addr)
			j = s[j].outer;
		s[i].outer = j;
	}
}

int cg_symtab_build(struct cg_symtab *t, struct cg_sym_in *in, size_t n)
{
	*t = (struct cg_symtab){0};
	if (n >= NO_OUTER)
		return -EOVERFLOW;
	struct sym_sort *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!kept(&in[i]))
			continue;
		uint64_t end = in[i].addr + in[i].size;
		tmp[k++] = (struct sym_sort){in[i].addr, end < in[i].addr ? UINT64_MAX : end,
		                             in[i].name, alias_rank(&in[i]), (uint32_t)i};
	}
	qsort(tmp, k, sizeof(*tmp), by_addr_then_rank);
	t->syms = malloc((k ? k : 1) * sizeof(*t->syms));
	if (!t->syms) {
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k;) {
		size_t g = i + 1;
		while (g < k && tmp[g].addr == tmp[i].addr)
			g++;
		t->n += put_group(&tmp[i], g - i, &t->syms[t->n]);
		i = g;
	}
	free(tmp);
	link_outer(t->syms, t->n);
	return 0;
}

int cg_symtab_read(struct cg_symtab *t, Dwfl_Module *mod)
{
	*t = (struct cg_symtab){0};
	int n = dwfl_module_getsymtab(mod);
	if (n <= 0)
		return 0;
	struct cg_sym_in *in = malloc((size_t)n * sizeof(*in));
	if (!in)
		return -ENOMEM;
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name =
		    dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &bias);
		/* Undefined (imported) symbols and absolute ones hold no code of the module. */
		if (!name || shndx == SHN_UNDEF ||
		    (shndx >= SHN_LORESERVE && shndx <= SHN_HIRESERVE))
			continue;
		in[k++] = (struct cg_sym_in){addr, sym.st_size, name, GELF_ST_BIND(sym.st_info),
		                             GELF_ST_TYPE(sym.st_info)};
	}
	int r = cg_symtab_build(t, in, k);
	free(in);
	return r;
}

const char *cg_symtab_find(const struct cg_symtab *t, uint64_t pc)
{
	/* The last symbol starting at or before pc, then out through the ones pc is past. */
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t i = lo ? (uint32_t)(lo - 1) : NO_OUTER; i != NO_OUTER; i = t->syms[i].outer)
		if (pc < t->syms[i].end)
			return t->syms[i].name;
	return NULL;
}

void cg_symtab_free(struct cg_symtab *t)
{
	free(t->syms);
	*t = (struct cg_symtab){0};
}

/* SPDX-License-Identifier: MIT */
/*
 * A module's function symbols, read once when its session opens and sorted
 * by address, so that each address is found by binary search rather than
 * by a scan of the ELF symbol table (libdwfl's dwfl_module_addrinfo scans
 * every symbol on every lookup). The rules (which symbols count, what
 * covers an address, which alias names it) are docs/symbols.md's.
 */
#ifndef CG_SYMTAB_H
#define CG_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct Dwfl_Module;

/* One symbol as the ELF table gives it, with its address where the module is loaded. */
struct cg_sym_in {
	uint64_t addr, size;
	const char *name;
	unsigned char bind, type; /* STB_*, STT_* */
};

/*
 * One kept symbol: it covers [addr, end). outer is the index of the
 * nearest symbol before it that still covers addr (UINT32_MAX: none),
 * the way out of a symbol an address is past.
 */
struct cg_sym {
	uint64_t addr, end;
	const char *name;
	uint32_t outer;
};

struct cg_symtab {
	struct cg_sym *syms;
	size_t n;
};

/*
 * The table of n symbols in the ELF table's order (the order breaks ties
 * between aliases); in is reordered. The names stay the caller's.
 * 0, -ENOMEM or -EOVERFLOW.
 */
int cg_symtab_build(struct cg_symtab *t, struct cg_sym_in *in, size_t n);

/*
 * The table of a module's symbols as libdwfl finds them: its .symtab,
 * else the .symtab of its separate debug file, else its .dynsym (with the
 * MiniDebugInfo table where there is one). The names are libdwfl's and
 * live as long as the module's session. 0 or -ENOMEM.
 */
int cg_symtab_read(struct cg_symtab *t, struct Dwfl_Module *mod);

/* The name of the function covering pc; NULL when no kept symbol does. */
const char *cg_symtab_find(const struct cg_symtab *t, uint64_t pc);

void cg_symtab_free(struct cg_symtab *t);

#endif

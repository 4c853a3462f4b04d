/* SPDX-License-Identifier: MIT */
/*
 * The code objects Python frames name (python.h): a table in reserved
 * address space, filled by the hooks without a lock, read by the writer.
 * A code object is known by its address and a fingerprint of what a
 * frame's line depends on (first line, name, file and line table, each
 * object's address, and the table's length): a code object freed and
 * another made at its address (compile() in a loop) is a new entry,
 * never the old one. The first hook to meet one copies its names and
 * line table into the table's own memory, so the writer never reads the
 * interpreter's objects, which may be gone by then.
 */
#ifndef CG_PY_CODES_H
#define CG_PY_CODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A Python frame in a stack's frames: bit 63 set (no user-space return
 * address has it), the code object's id in bits 32 to 62, the byte
 * offset of its instruction in bits 0 to 31. Code id 0 is a mark: offset
 * 0, the Python frames were cut at the bound (outer ones left out);
 * offset 1, a frame the probe could not read.
 */
#define CG_PY_FRAME (1ull << 63)
#define CG_PY_CUT CG_PY_FRAME
#define CG_PY_UNREADABLE (CG_PY_FRAME | 1u)
/* Python frames a stack keeps at most, innermost first. */
#define CG_PY_DEPTH_MAX 128

/* What a code object is read by: its fields' offsets in this interpreter (python.c). */
struct cg_py_code_src {
	const void *code;
	const void *name, *qualname, *file, *table; /* the objects, qualname NULL before 3.11 */
	int32_t first_line;
	uint8_t format; /* the line table's, enum cg_py_lt's numbers */
};

/* A code object's copy, for the writer. */
struct cg_py_code {
	uint32_t id;
	int32_t first_line;
	uint8_t format;
	const char *name, *qualname, *file; /* UTF-8, not NUL-terminated */
	uint32_t name_len, qualname_len, file_len, table_len;
	const uint8_t *table;
};

/* Outside hooks, once: the table's address space. false: no room (Python frames off). */
bool cg_py_codes_setup(void);
/*
 * In a hook: the id of the code object src describes (1 and up), copied
 * in the first time; 0 when the table is full or the objects unreadable.
 * str_utf8 copies a str object's text as UTF-8 into out (cap bytes),
 * returning its length.
 */
typedef uint32_t (*cg_py_str_fn)(const void *str, char *out, uint32_t cap);
typedef uint32_t (*cg_py_bytes_fn)(const void *bytes, const uint8_t **data);
uint32_t cg_py_code_id(const struct cg_py_code_src *src, uint64_t fingerprint, cg_py_str_fn str,
		       cg_py_bytes_fn bytes);

/* Writer: code id's copy; false when id names none. */
bool cg_py_code_get(uint32_t id, struct cg_py_code *out);
/*
 * Writer: true the first time id is asked in this trace (its definition
 * is to be written), false after.
 */
bool cg_py_code_first_use(uint32_t id);
/* Writer, a new trace: every code object is written anew. */
void cg_py_codes_new_trace(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * One-line kernel files (/proc, /sys) read without allocating or locking,
 * so that session start-up may read them before main.
 */
#ifndef CG_SYSLINE_H
#define CG_SYSLINE_H

#include <stddef.h>

/* The file's first line, NUL-terminated without its newline; "" when unreadable. */
void cg_sysline(const char *path, char *buf, size_t len);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 (ISO-HDLC, the polynomial of zlib and Python's zlib.crc32): by
 * carry-less multiplication where the CPU has it, else slicing by 8.
 */
#ifndef CG_CRC32_H
#define CG_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* crc of the bytes so far (0 to start), extended by p[0..n). */
uint32_t cg_crc32(uint32_t crc, const void *p, size_t n);

#endif

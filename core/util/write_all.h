/* SPDX-License-Identifier: MIT */
/* The one loop that writes a whole buffer to a descriptor. */
#ifndef CG_WRITE_ALL_H
#define CG_WRITE_ALL_H

#include <stddef.h>

/*
 * Writes n bytes of p to fd, retrying EINTR and short writes. Returns 0, or
 * the negative errno of the failed write(2) (-EIO should it ever write 0).
 * No allocation and no locks: the preload probe may call it anywhere.
 */
int cg_write_all(int fd, const void *p, size_t n);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The driver API side: the real functions behind the wrappers, how a
 * pointer the program obtained is swapped for a wrapper, and the few
 * driver queries the probe makes (never one that creates a context).
 */
#ifndef CG_CUDA_DRIVER_H
#define CG_CUDA_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi.h"

/* Every wrapped driver function, by exported name. */
#define CG_DRV_FUNCS(X)                                                                       \
	X(cuMemAlloc_v2) X(cuMemAllocPitch_v2) X(cuMemAllocManaged) X(cuMemFree_v2)           \
	X(cuMemAllocHost_v2) X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemAllocAsync)           \
	X(cuMemAllocAsync_ptsz) X(cuMemAllocFromPoolAsync) X(cuMemAllocFromPoolAsync_ptsz)    \
	X(cuMemFreeAsync) X(cuMemFreeAsync_ptsz) X(cuMemGetInfo_v2) X(cuMemCreate)            \
	X(cuMemRelease) X(cuMemMap) X(cuMemUnmap) X(cuGetProcAddress) X(cuGetProcAddress_v2)

#define CG_DRV_ENUM(name) CG_DRV_##name,
enum cg_drv_fn { CG_DRV_FUNCS(CG_DRV_ENUM) CG_DRV_COUNT };
#undef CG_DRV_ENUM

/* The real function behind a wrapper, found on first use; NULL when there is none. */
void *cg_drv_real(enum cg_drv_fn fn);
/* The wrapper to hand out for fn, a pointer the program got from the driver; else fn. */
void *cg_drv_substitute(void *fn);
/* The wrapper for an exported name, or NULL when the name is not wrapped. */
void *cg_drv_wrapper_by_name(const char *name);

struct cg_cuda_identity {
	unsigned char uuid[16];
	char name[256];
	uint64_t total_bytes;
};

/* The ordinal of the calling thread's current context; -1 without one. */
int cg_drv_current_device(void);
/* Whether the calling thread has a current context (so queries create none). */
bool cg_drv_has_context(void);
/* cuMemGetInfo on the current context; 0 or -1. */
int cg_drv_mem_info(size_t *free_bytes, size_t *total_bytes);
/* UUID, name and size of a device: needs only cuInit, which the program did. */
int cg_drv_identity(uint8_t ordinal, struct cg_cuda_identity *id);

#endif

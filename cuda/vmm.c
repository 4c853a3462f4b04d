/* SPDX-License-Identifier: MIT */
#include "vmm.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "driver-hooks.h"
#include "probe.h"

struct handle {
	uint64_t handle;
	uint32_t maps;
	uint8_t device;
	bool released;
};

struct mapping {
	uint64_t va, size, handle;
};

/*
 * VMM calls are rare and never come from signal handlers; a mutex guards
 * the two small tables, and fork takes it so a child never finds it held.
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct handle *handles;
static size_t n_handles, cap_handles;
static struct mapping *maps;
static size_t n_maps, cap_maps;

static void prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void parent(void)
{
	pthread_mutex_unlock(&lock);
}

/* The child's trace starts empty: it forgets the parent's handles. */
static void child(void)
{
	n_handles = n_maps = 0;
	pthread_mutex_unlock(&lock);
}

static void setup(void)
{
	pthread_atfork(prepare, parent, child);
}

static void enter(void)
{
	pthread_once(&once, setup);
	pthread_mutex_lock(&lock);
}

static bool grow(void **p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 16;
	void *q = cg_probe_real_realloc(*p, c * elem);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

static struct handle *find(uint64_t h)
{
	for (size_t i = 0; i < n_handles; i++)
		if (handles[i].handle == h)
			return &handles[i];
	return NULL;
}

/* Caller holds the lock; the free is recorded once nothing keeps the memory. */
static void maybe_free(struct handle *h, enum cg_cuda_op op)
{
	if (!h->released || h->maps > 0)
		return;
	uint8_t device = h->device;
	cg_probe_device_free(cg_probe_stamp_before(), h->handle, op, CG_PROBE_VMM);
	*h = handles[--n_handles];
	cg_drv_snapshot(device);
}

void cg_vmm_create(uint64_t handle, uint64_t size, uint8_t device)
{
	/* Before the lock: unwinding may wait for the loader's (probe.h). */
	uint32_t stack = cg_probe_stack();
	enter();
	if (grow((void **)&handles, &cap_handles, n_handles, sizeof(*handles))) {
		handles[n_handles++] = (struct handle){handle, 0, device, false};
		cg_probe_device_alloc_stack(handle, size, device, CG_CU_cuMemCreate, CG_PROBE_VMM,
					    stack);
		cg_drv_snapshot(device);
	}
	pthread_mutex_unlock(&lock);
}

void cg_vmm_release(uint64_t handle)
{
	enter();
	struct handle *h = find(handle);
	if (h) {
		h->released = true;
		maybe_free(h, CG_CU_cuMemRelease);
	}
	pthread_mutex_unlock(&lock);
}

void cg_vmm_map(uint64_t va, uint64_t size, uint64_t handle)
{
	enter();
	struct handle *h = find(handle);
	if (h && grow((void **)&maps, &cap_maps, n_maps, sizeof(*maps))) {
		maps[n_maps++] = (struct mapping){va, size, handle};
		h->maps++;
	}
	pthread_mutex_unlock(&lock);
}

void cg_vmm_unmap(uint64_t va, uint64_t size)
{
	enter();
	for (size_t i = 0; i < n_maps;) {
		struct mapping *m = &maps[i];
		if (m->va < va || m->va >= va + size) {
			i++;
			continue;
		}
		struct handle *h = find(m->handle);
		*m = maps[--n_maps];
		if (h) {
			h->maps--;
			maybe_free(h, CG_CU_cuMemUnmap);
		}
	}
	pthread_mutex_unlock(&lock);
}

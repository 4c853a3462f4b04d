/* SPDX-License-Identifier: MIT */
#include "runtime.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "driver.h"
#include "probe.h"

#define CG_RT_NAME(name) #name,
static const char *const names[CG_RT_COUNT] = {CG_RT_FUNCS(CG_RT_NAME)};
#undef CG_RT_NAME

/*
 * Per (calling object, runtime copy): the functions as found. Both halves of
 * the key are checked on every call, since a library dlclosed and another
 * loaded can reuse a link_map address, and a runtime can be unloaded and
 * loaded again elsewhere. No reference is kept: the probe must not keep a
 * library loaded that the program let go.
 */
#define CACHE 32

struct copy {
	const void *caller_map;
	const void *runtime;
	void *fn[CG_RT_COUNT];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct copy cache[CACHE];
static unsigned next_slot;
static _Atomic(void *) fallback[CG_RT_COUNT]; /* callers that link no runtime themselves */

static void prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void release(void)
{
	pthread_mutex_unlock(&lock);
}

static void setup(void)
{
	pthread_atfork(prepare, release, release);
}

/* The first libcudart in the object's DT_NEEDED list, if any. */
static const char *needed_runtime(const struct link_map *lm)
{
	const ElfW(Dyn) *d = lm->l_ld;
	const char *strtab = NULL;
	for (const ElfW(Dyn) *e = d; e && e->d_tag != DT_NULL; e++)
		if (e->d_tag == DT_STRTAB)
			strtab = (const char *)e->d_un.d_ptr;
	if (!strtab)
		return NULL;
	for (const ElfW(Dyn) *e = d; e->d_tag != DT_NULL; e++)
		if (e->d_tag == DT_NEEDED && strncmp(strtab + e->d_un.d_val, "libcudart.so", 12) == 0)
			return strtab + e->d_un.d_val;
	return NULL;
}

static void *lookup_fallback(enum cg_rt_fn fn)
{
	void *p = atomic_load(&fallback[fn]);
	if (!p) {
		/* The first runtime after the probe in the global scope. */
		p = cg_probe_dlsym(RTLD_NEXT, names[fn]);
		if (p)
			atomic_store(&fallback[fn], p);
	}
	return p;
}

static void *lookup(enum cg_rt_fn fn, const void *caller_map, void *runtime)
{
	pthread_once(&once, setup);
	pthread_mutex_lock(&lock);
	struct copy *c = NULL;
	for (int i = 0; i < CACHE && !c; i++)
		if (cache[i].caller_map == caller_map && cache[i].runtime == runtime)
			c = &cache[i];
	if (!c) {
		c = &cache[next_slot++ % CACHE];
		memset(c, 0, sizeof(*c));
		c->caller_map = caller_map;
		c->runtime = runtime;
	}
	if (!c->fn[fn])
		c->fn[fn] = cg_probe_dlsym(runtime, names[fn]);
	void *p = c->fn[fn];
	pthread_mutex_unlock(&lock);
	return p;
}

void *cg_rt_real(enum cg_rt_fn fn, const void *caller)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (!caller || !dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return lookup_fallback(fn);
	const char *soname = needed_runtime(lm);
	void *h = soname ? dlopen(soname, RTLD_NOLOAD | RTLD_LAZY) : NULL;
	if (!h)
		return lookup_fallback(fn);
	void *p = lookup(fn, lm, h);
	/* The caller holds the runtime loaded; our reference goes at once. */
	dlclose(h);
	return p;
}

static int current_device(const void *caller)
{
	cudaError_t (*get)(int *) = (cudaError_t(*)(int *))cg_rt_real(CG_RT_cudaGetDevice, caller);
	int dev = -1;
	if (!get || get(&dev) != cudaSuccess || dev < 0 || dev > 254)
		return -1;
	return dev;
}

/* A thread whose runtime call just succeeded or ran out of memory has a context. */
static int mem_info(const void *caller, size_t *free_bytes, size_t *total_bytes)
{
	cudaError_t (*info)(size_t *, size_t *) =
		(cudaError_t(*)(size_t *, size_t *))cg_rt_real(CG_RT_cudaMemGetInfo, caller);
	if (!info)
		return -1;
	cg_probe_nest_enter();
	cudaError_t r = info(free_bytes, total_bytes);
	cg_probe_nest_leave();
	return r == cudaSuccess ? 0 : -1;
}

static void snapshot(int device, const void *caller)
{
	size_t free_bytes, total_bytes;
	if (!cg_probe_device_snapshots() || device < 0 || device == CG_PROBE_HOST ||
	    !cg_drv_has_context() || mem_info(caller, &free_bytes, &total_bytes) < 0)
		return;
	cg_probe_device_checkpoint((uint8_t)device, free_bytes, total_bytes, 0);
}

void cg_rt_after_alloc(cudaError_t r, const void *ptr, uint64_t bytes, enum cg_cuda_op op,
		       uint8_t flags, int device, const void *caller)
{
	if (r == cudaErrorMemoryAllocation && device != CG_PROBE_HOST) {
		size_t free_bytes, total_bytes;
		int dev = current_device(caller);
		if (dev >= 0 && mem_info(caller, &free_bytes, &total_bytes) == 0)
			cg_probe_device_checkpoint((uint8_t)dev, free_bytes, total_bytes,
						   bytes ? bytes : 1);
		return;
	}
	if (r != cudaSuccess || !ptr)
		return;
	if (device < 0)
		device = current_device(caller);
	if (device < 0)
		device = 0;
	cg_probe_device_alloc((uint64_t)(uintptr_t)ptr, bytes, (uint8_t)device, op, flags);
	snapshot(device, caller);
}

/* cudaFree(NULL) and the cudaFree(0) context idiom are not frees. */
void cg_rt_after_free(cudaError_t r, uint64_t ticks, const void *ptr, enum cg_cuda_op op,
		      const void *caller)
{
	if (r != cudaSuccess || !ptr)
		return;
	cg_probe_device_free(ticks, (uint64_t)(uintptr_t)ptr, op, 0);
	/* Pinned host memory is no device's: no checkpoint after it. */
	if (op != CG_CU_cudaFreeHost)
		snapshot(current_device(caller), caller);
}

void cg_rt_after_mem_info(cudaError_t r, const size_t *free_bytes, const size_t *total_bytes,
			  const void *caller)
{
	if (r != cudaSuccess || !free_bytes || !total_bytes)
		return;
	int dev = current_device(caller);
	if (dev >= 0)
		cg_probe_device_checkpoint((uint8_t)dev, *free_bytes, *total_bytes, 0);
}

/* SPDX-License-Identifier: MIT */
#include "driver.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "driver-api.h"
#include "probe.h"


struct entry {
	const char *name;
	void *wrapper;
	_Atomic(void *) real;
};

#define CG_DRV_ENTRY(name) {#name, (void *)name, NULL},
static struct entry table[CG_DRV_COUNT] = {CG_DRV_FUNCS(CG_DRV_ENTRY)};
#undef CG_DRV_ENTRY

/* The driver as the program loaded it: by soname, without loading it ourselves. */
static void *libcuda(void)
{
	static _Atomic(void *) handle;
	void *h = atomic_load(&handle);
	if (!h) {
		h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
		if (h)
			atomic_store(&handle, h);
	}
	return h;
}

static void *lookup(const char *name)
{
	void *h = libcuda();
	void *fn = h ? cg_probe_dlsym(h, name) : NULL;
	/* A program linked with -lcuda under another soname: the next definition after ours. */
	return fn ? fn : cg_probe_dlsym(RTLD_NEXT, name);
}

void *cg_drv_real(enum cg_drv_fn fn)
{
	void *p = atomic_load_explicit(&table[fn].real, memory_order_acquire);
	if (!p) {
		p = lookup(table[fn].name);
		/* Never our own wrapper: that would loop. */
		if (p == table[fn].wrapper)
			p = NULL;
		if (p)
			atomic_store(&table[fn].real, p);
	}
	return p;
}

static int index_of(const char *name)
{
	for (int i = 0; i < CG_DRV_COUNT; i++)
		if (strcmp(table[i].name, name) == 0)
			return i;
	return -1;
}

void *cg_drv_wrapper_by_name(const char *name)
{
	int i = index_of(name);
	return i < 0 ? NULL : table[i].wrapper;
}

/*
 * A pointer is swapped only when it is exactly one of the exported
 * functions a wrapper implements (so the caller's name, version and flags
 * resolved to that signature); anything else goes back untouched.
 */
void *cg_drv_substitute(void *fn)
{
	Dl_info info;
	if (!fn)
		return fn;
	for (int i = 0; i < CG_DRV_COUNT; i++) {
		void *real = atomic_load_explicit(&table[i].real, memory_order_acquire);
		if (real == fn)
			return table[i].wrapper;
	}
	if (!dladdr(fn, &info) || info.dli_saddr != fn || !info.dli_sname)
		return fn;
	int i = index_of(info.dli_sname);
	if (i < 0 || table[i].wrapper == fn)
		return fn;
	void *expected = NULL;
	atomic_compare_exchange_strong(&table[i].real, &expected, fn);
	return atomic_load(&table[i].real) == fn ? table[i].wrapper : fn;
}

/* Driver queries the probe makes for itself: looked up once, not at every allocation. */
enum query {
	Q_CTX_GET_CURRENT,
	Q_CTX_GET_DEVICE,
	Q_DEVICE_GET,
	Q_DEVICE_GET_UUID_V2,
	Q_DEVICE_GET_UUID,
	Q_DEVICE_GET_NAME,
	Q_DEVICE_TOTAL_MEM_V2,
	Q_COUNT
};

static void *query(enum query q)
{
	static const char *const names[Q_COUNT] = {
		"cuCtxGetCurrent", "cuCtxGetDevice",  "cuDeviceGet",        "cuDeviceGetUuid_v2",
		"cuDeviceGetUuid", "cuDeviceGetName", "cuDeviceTotalMem_v2",
	};
	static _Atomic(void *) found[Q_COUNT];
	void *p = atomic_load_explicit(&found[q], memory_order_acquire);
	if (!p) {
		void *h = libcuda();
		p = h ? cg_probe_dlsym(h, names[q]) : NULL;
		if (p)
			atomic_store(&found[q], p);
	}
	return p;
}

bool cg_drv_has_context(void)
{
	CUresult (*get)(CUcontext *) = (CUresult(*)(CUcontext *))query(Q_CTX_GET_CURRENT);
	CUcontext ctx = NULL;
	return get && get(&ctx) == CUDA_SUCCESS && ctx != NULL;
}

int cg_drv_current_device(void)
{
	CUresult (*get)(CUdevice *) = (CUresult(*)(CUdevice *))query(Q_CTX_GET_DEVICE);
	CUdevice dev = -1;
	if (!get || get(&dev) != CUDA_SUCCESS || dev < 0 || dev > 254)
		return -1;
	return dev;
}

int cg_drv_mem_info(size_t *free_bytes, size_t *total_bytes)
{
	CUresult (*info)(size_t *, size_t *) =
		(CUresult(*)(size_t *, size_t *))cg_drv_real(CG_DRV_cuMemGetInfo_v2);
	if (!info || !cg_drv_has_context())
		return -1;
	return info(free_bytes, total_bytes) == CUDA_SUCCESS ? 0 : -1;
}

int cg_drv_identity(uint8_t ordinal, struct cg_cuda_identity *id)
{
	CUresult (*get)(CUdevice *, int) = (CUresult(*)(CUdevice *, int))query(Q_DEVICE_GET);
	CUresult (*uuid)(cg_cu_uuid *, CUdevice) =
		(CUresult(*)(cg_cu_uuid *, CUdevice))query(Q_DEVICE_GET_UUID_V2);
	CUresult (*name)(char *, int, CUdevice) =
		(CUresult(*)(char *, int, CUdevice))query(Q_DEVICE_GET_NAME);
	CUresult (*total)(size_t *, CUdevice) =
		(CUresult(*)(size_t *, CUdevice))query(Q_DEVICE_TOTAL_MEM_V2);
	CUdevice dev;
	cg_cu_uuid u;
	if (!uuid)
		uuid = (CUresult(*)(cg_cu_uuid *, CUdevice))query(Q_DEVICE_GET_UUID);
	memset(id, 0, sizeof(*id));
	if (!get || !uuid || get(&dev, ordinal) != CUDA_SUCCESS || uuid(&u, dev) != CUDA_SUCCESS)
		return -1;
	memcpy(id->uuid, u.bytes, 16);
	if (name && name(id->name, (int)sizeof(id->name) - 1, dev) != CUDA_SUCCESS)
		id->name[0] = '\0';
	size_t bytes = 0;
	if (total && total(&bytes, dev) == CUDA_SUCCESS)
		id->total_bytes = bytes;
	return 0;
}

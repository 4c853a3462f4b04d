/* SPDX-License-Identifier: MIT */
#include "device-events.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "driver.h"
#include "hooks.h"
#include "real.h"
#include "session.h"
#include "thread.h"

static atomic_uint_fast64_t announced[4]; /* one bit per device ordinal */

static bool recording(void)
{
	return !cg_self.guard && cg_session_recording();
}

void cg_cuda_record_alloc(uint64_t addr, uint64_t size, uint8_t device, enum cg_cuda_op op,
			  uint8_t flags)
{
	if (!recording())
		return;
	int saved = errno;
	cg_self.guard++;
	if (device != CG_DEV_CPU)
		cg_cuda_announce(device);
	struct cg_event e = {cg_hook_stamp(false), addr, size, cg_thread_span(),
			     (uint8_t)(CG_EV_DEV_ALLOC | flags), (uint8_t)op, cg_thread_category(),
			     device};
	cg_hook_push(&e);
	cg_self.guard--;
	errno = saved;
}

uint64_t cg_cuda_stamp_before(void)
{
	return recording() ? cg_hook_stamp(true) : 0;
}

void cg_cuda_record_free(uint64_t ticks, uint64_t addr, enum cg_cuda_op op, uint8_t flags)
{
	if (!recording() || !ticks)
		return;
	struct cg_event e = {ticks, addr, 0, cg_thread_span(), (uint8_t)(CG_EV_DEV_FREE | flags),
			     (uint8_t)op, 0, 0};
	cg_hook_push(&e);
}

void cg_cuda_record_meminfo(uint8_t device, uint64_t free_bytes, uint64_t total_bytes,
			    uint64_t oom_request)
{
	if (!recording())
		return;
	int saved = errno;
	cg_self.guard++;
	cg_cuda_announce(device);
	uint64_t ts = cg_hook_stamp(false);
	if (oom_request) {
		struct cg_event oom = {ts, oom_request, 0, cg_thread_span(), CG_EV_DEV_OOM, 0, 0,
				       device};
		cg_hook_push(&oom);
		ts = cg_hook_stamp(false);
	}
	uint64_t used = total_bytes > free_bytes ? total_bytes - free_bytes : 0;
	struct cg_event e = {ts, used, free_bytes, cg_thread_span(), CG_EV_DEV_MEMINFO, 0, 0, device};
	cg_hook_push(&e);
	cg_self.guard--;
	errno = saved;
}

void cg_cuda_announce(uint8_t device)
{
	if (device == CG_DEV_CPU)
		return;
	uint64_t bit = 1ull << (device % 64);
	if (atomic_fetch_or(&announced[device / 64], bit) & bit)
		return;
	struct cg_cuda_identity id;
	if (cg_drv_identity(device, &id) < 0)
		return;
	uint64_t a, b;
	memcpy(&a, id.uuid, 8);
	memcpy(&b, id.uuid + 8, 8);
	struct cg_event u = {cg_hook_stamp(false), a, b, cg_thread_span(), CG_EV_DEV_UUID, 0, 0,
			     device};
	cg_hook_push(&u);
	/* The writer frees the name's copy once the record is out. */
	size_t n = strnlen(id.name, sizeof(id.name));
	char *name = n ? cg_real.malloc(n + 1) : NULL;
	if (name) {
		memcpy(name, id.name, n);
		name[n] = '\0';
	}
	struct cg_event e = {cg_hook_stamp(false), (uint64_t)(uintptr_t)name, id.total_bytes,
			     cg_thread_span(), CG_EV_DEV_NAME, 0, 0, device};
	cg_hook_push(&e);
}

void cg_cuda_session_reset(void)
{
	for (int i = 0; i < 4; i++)
		atomic_store(&announced[i], 0);
}

/* SPDX-License-Identifier: MIT */
#include "device.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "device_source.h"
#include "event.h"
#include "hooks.h"
#include "push.h"
#include "real.h"
#include "stack.h"
#include "state.h"
#include "thread.h"

static atomic_uint_fast64_t announced[4]; /* one bit per device index */

void cg_device_session_start(void)
{
	for (int i = 0; i < 4; i++)
		atomic_store(&announced[i], 0);
}

static bool recording(void)
{
	return !cg_self.guard && cg_recording();
}

/*
 * The device's identity, once per trace, ahead of its first event, whose
 * record the writer puts it on; called inside the probe (guard held). The
 * writer frees the copy of the strings once the record is out.
 */
static void announce(uint8_t device)
{
	const struct cg_device_source *s = cg_device_source();
	if (device == CG_PROBE_HOST || !s || !s->identify)
		return;
	uint64_t bit = 1ull << (device % 64);
	if (atomic_fetch_or(&announced[device / 64], bit) & bit)
		return;
	struct cg_device_identity id;
	memset(&id, 0, sizeof(id));
	if (s->identify(device, &id) < 0)
		return;
	size_t u = strnlen(id.uuid, sizeof(id.uuid) - 1);
	size_t n = strnlen(id.name, sizeof(id.name) - 1);
	char *copy = cg_real.malloc(u + n + 2);
	if (!copy)
		return;
	memcpy(copy, id.uuid, u);
	copy[u] = '\0';
	memcpy(copy + u + 1, id.name, n);
	copy[u + 1 + n] = '\0';
	struct cg_event e = {cg_stamp(false), (uint64_t)(uintptr_t)copy, id.total_bytes,
			     cg_thread_span(), CG_EV_DEV_INFO, 0, 0, device};
	cg_push(&e, 0);
}

uint32_t cg_probe_stack(void)
{
	if (!cg_stack_depth || !recording())
		return 0;
	int saved = errno;
	cg_self.guard++;
	uint32_t stack = cg_stack_capture(true);
	cg_self.guard--;
	errno = saved;
	return stack;
}

void cg_probe_device_alloc_stack(uint64_t addr, uint64_t size, uint8_t device, uint8_t op,
				 uint8_t flags, uint32_t stack)
{
	if (!recording())
		return;
	int saved = errno;
	cg_self.guard++;
	announce(device);
	struct cg_event e = {cg_stamp(false), addr, size, cg_thread_span(),
			     (uint8_t)(CG_EV_DEV_ALLOC | flags), op, cg_hook_category(addr, size), device};
	cg_push(&e, stack);
	cg_stack_unhold();
	cg_self.guard--;
	errno = saved;
}

void cg_probe_device_alloc(uint64_t addr, uint64_t size, uint8_t device, uint8_t op,
			   uint8_t flags)
{
	cg_probe_device_alloc_stack(addr, size, device, op, flags, cg_probe_stack());
}

uint64_t cg_probe_stamp_before(void)
{
	return recording() ? cg_stamp(true) : 0;
}

void cg_probe_device_free(uint64_t ticks, uint64_t addr, uint8_t op, uint8_t flags)
{
	if (!recording() || !ticks)
		return;
	struct cg_event e = {ticks, addr, 0, cg_thread_span(), (uint8_t)(CG_EV_DEV_FREE | flags),
			     op, 0, 0};
	cg_push(&e, 0);
}

void cg_probe_device_checkpoint(uint8_t device, uint64_t free_bytes, uint64_t total_bytes,
				uint64_t oom_request)
{
	if (!recording())
		return;
	int saved = errno;
	cg_self.guard++;
	announce(device);
	uint64_t ts = cg_stamp(false);
	if (oom_request) {
		struct cg_event oom = {ts, oom_request, 0, cg_thread_span(), CG_EV_DEV_OOM, 0, 0,
				       device};
		cg_push(&oom, 0);
		ts = cg_stamp(false);
	}
	uint64_t used = total_bytes > free_bytes ? total_bytes - free_bytes : 0;
	struct cg_event e = {ts, used, free_bytes, cg_thread_span(), CG_EV_DEV_MEMINFO, 0, 0,
			     device};
	cg_push(&e, 0);
	cg_self.guard--;
	errno = saved;
}

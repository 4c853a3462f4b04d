/* SPDX-License-Identifier: MIT */
#include "device.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "event.h"
#include "hooks.h"
#include "real.h"
#include "session.h"
#include "stack.h"
#include "thread.h"

/* Read by hooks and the writer thread; registered from a constructor. */
static const struct cg_device_source *_Atomic source;
static atomic_uint_fast64_t announced[4]; /* one bit per device index */

int cg_probe_register_device_source(const struct cg_device_source *src)
{
	const struct cg_device_source *none = NULL;
	return atomic_compare_exchange_strong(&source, &none, src) ? 0 : -EBUSY;
}

const char *cg_device_op_name(uint8_t op)
{
	const struct cg_device_source *s = atomic_load_explicit(&source, memory_order_acquire);
	return s && op < s->op_count ? s->op_names[op] : "device";
}

size_t cg_device_name(char out[32], uint8_t device)
{
	const struct cg_device_source *s = atomic_load_explicit(&source, memory_order_acquire);
	const char *fixed = device == CG_PROBE_HOST ? "cpu" : !s ? "unknown" : NULL;
	if (fixed) {
		memcpy(out, fixed, strlen(fixed) + 1);
		return strlen(fixed);
	}
	size_t n = s->device_name(out, 32, device);
	return n < 32 ? n : 31;
}

void cg_device_session_start(void)
{
	for (int i = 0; i < 4; i++)
		atomic_store(&announced[i], 0);
}

static bool recording(void)
{
	return !cg_self.guard && cg_session_recording();
}

/*
 * The device's identity, once per trace, ahead of its first event, whose
 * record the writer puts it on; called inside the probe (guard held). The
 * writer frees the copy of the strings once the record is out.
 */
static void announce(uint8_t device)
{
	const struct cg_device_source *s = atomic_load_explicit(&source, memory_order_acquire);
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
	struct cg_event e = {cg_hook_stamp(false), (uint64_t)(uintptr_t)copy, id.total_bytes,
			     cg_thread_span(), CG_EV_DEV_INFO, 0, 0, device};
	cg_hook_push(&e, 0);
}

uint32_t cg_probe_stack(void)
{
	if (!cg_stack_depth || !recording())
		return 0;
	int saved = errno;
	cg_self.guard++;
	uint32_t stack = cg_stack_capture();
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
	struct cg_event e = {cg_hook_stamp(false), addr, size, cg_thread_span(),
			     (uint8_t)(CG_EV_DEV_ALLOC | flags), op, cg_hook_category(addr, size), device};
	cg_hook_push(&e, stack);
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
	return recording() ? cg_hook_stamp(true) : 0;
}

void cg_probe_device_free(uint64_t ticks, uint64_t addr, uint8_t op, uint8_t flags)
{
	if (!recording() || !ticks)
		return;
	struct cg_event e = {ticks, addr, 0, cg_thread_span(), (uint8_t)(CG_EV_DEV_FREE | flags),
			     op, 0, 0};
	cg_hook_push(&e, 0);
}

void cg_probe_device_checkpoint(uint8_t device, uint64_t free_bytes, uint64_t total_bytes,
				uint64_t oom_request)
{
	if (!recording())
		return;
	int saved = errno;
	cg_self.guard++;
	announce(device);
	uint64_t ts = cg_hook_stamp(false);
	if (oom_request) {
		struct cg_event oom = {ts, oom_request, 0, cg_thread_span(), CG_EV_DEV_OOM, 0, 0,
				       device};
		cg_hook_push(&oom, 0);
		ts = cg_hook_stamp(false);
	}
	uint64_t used = total_bytes > free_bytes ? total_bytes - free_bytes : 0;
	struct cg_event e = {ts, used, free_bytes, cg_thread_span(), CG_EV_DEV_MEMINFO, 0, 0,
			     device};
	cg_hook_push(&e, 0);
	cg_self.guard--;
	errno = saved;
}

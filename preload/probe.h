/* SPDX-License-Identifier: MIT */
/*
 * preload/probe.h: the contract between the probe's engine (preload/) and
 * the device memory side (cuda/), in the spirit of heaptrack's
 * libheaptrack.h: the engine sits behind these few functions and the CUDA
 * hooks only call them. The dependency points one way: cuda/ includes this
 * header and nothing else from preload/; preload/ includes nothing from
 * cuda/ and knows no CUDA name.
 */
#ifndef CG_PROBE_H
#define CG_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The mark of a function libcgprobe.so exports: preload/exports.c holds the
 * host entry points, cuda/exports-*.c the CUDA ones; libcgprobe.map lists
 * them all. Everything else is hidden.
 */
#define CG_PROBE_EXPORT __attribute__((visibility("default")))

/*
 * Device memory. A source of device events registers once, from a
 * constructor; it numbers its devices 0 to 254 and hands the engine, as
 * strings, everything a record says about them. The engine stamps and
 * queues the events like heap events (per-thread ring, no lock), and its
 * writer thread matches frees to allocations and formats the lines.
 */

/* The device index of host memory a device API allocates (pinned): records say "cpu". */
#define CG_PROBE_HOST 255

/* Flags of a device allocation or free. */
#define CG_PROBE_MANAGED 0x10 /* managed (unified) memory: "managed": true */
#define CG_PROBE_VMM 0x20     /* addr is a physical memory handle: tensor_id vmm:0x... */

/* A device as the cgprobe_device_* fields of its first record show it. */
struct cg_device_identity {
	char uuid[64];        /* the physical device, joining traces of several processes */
	char name[256];       /* "" when unknown: the record has no name */
	uint64_t total_bytes; /* 0 when unknown */
};

struct cg_device_source {
	/* The op_name of records, indexed by the op the source passes with each event. */
	const char *const *op_names;
	unsigned op_count;
	/* A device's name in records ("cuda:0") into out; returns its length, below cap. */
	size_t (*device_name)(char *out, size_t cap, uint8_t device);
	/*
	 * A device's identity, asked once per trace, on the thread of its first
	 * event, inside the probe (what it allocates is not recorded, errno is
	 * kept). Returns 0, or a negative errno: then the trace has no
	 * identity for it.
	 */
	int (*identify)(uint8_t device, struct cg_device_identity *id);
};

/* One source per process, for its lifetime: 0, or -EBUSY when one is registered. */
int cg_probe_register_device_source(const struct cg_device_source *src);

/*
 * The events, to call after the real call succeeded (a checkpoint also
 * after one that ran out of memory). None takes a lock; only a device's
 * first event in a trace allocates (the copy of its identity). Each does
 * nothing unless a session is recording and the thread is not inside the
 * probe. device: an index or CG_PROBE_HOST; op: an index of the source's
 * op_names; flags: CG_PROBE_MANAGED, CG_PROBE_VMM.
 */
void cg_probe_device_alloc(uint64_t addr, uint64_t size, uint8_t device, uint8_t op,
			   uint8_t flags);
/*
 * The same with the call stack taken beforehand by cg_probe_stack, which
 * a source calls before it takes a lock of its own: unwinding may wait
 * for the loader's lock (preload/stack.c says why that is safe only with
 * no other lock held). cg_probe_device_alloc takes the stack itself. The
 * stack is the calling thread's, without the probe's frames; 0 for none.
 */
uint32_t cg_probe_stack(void);
void cg_probe_device_alloc_stack(uint64_t addr, uint64_t size, uint8_t device, uint8_t op,
				 uint8_t flags, uint32_t stack);
/*
 * A free is stamped before the real call, so that an address reused at
 * once sorts after it: take the stamp first (0 when nothing is to be
 * recorded), record with it after the call.
 */
uint64_t cg_probe_stamp_before(void);
void cg_probe_device_free(uint64_t ticks, uint64_t addr, uint8_t op, uint8_t flags);
/* A device_memory record; oom_request is the size of a request that failed, or 0. */
void cg_probe_device_checkpoint(uint8_t device, uint64_t free_bytes, uint64_t total_bytes,
				uint64_t oom_request);

/*
 * The real dlsym, NULL until the probe's table of real functions is
 * complete. A variable, not a function: cuda/dl.c's dlsym jumps through it
 * from assembly, so the loader still sees the caller's return address.
 * Called from the probe, RTLD_NEXT means the next library after the probe.
 */
extern void *(*cg_probe_dlsym)(void *handle, const char *name);
/* Fills the table of real functions if need be (safe from any hook); true once it is complete. */
bool cg_probe_real_init(void);
/* The real realloc: memory the probe keeps for itself, never recorded. */
void *cg_probe_real_realloc(void *p, size_t size);

/*
 * The calling thread's depth inside wrapped device API calls. Wrappers
 * that find it non-zero record nothing, so a runtime call that drives the
 * driver through other wrappers is recorded once, by its own wrapper.
 * Thread-local, no lock.
 */
void cg_probe_nest_enter(void);
void cg_probe_nest_leave(void);
bool cg_probe_nested(void);

/* Whether CGPROBE_DEVICE_SNAPSHOTS=alloc asks for a checkpoint after each allocation and free. */
bool cg_probe_device_snapshots(void);

#endif

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
 * The calling thread's depth inside wrapped device API calls: a call that
 * reaches other wrappers (a runtime call driving the driver) is recorded
 * once, by the outermost. Thread-local, no lock.
 */
void cg_probe_nest_enter(void);
void cg_probe_nest_leave(void);
bool cg_probe_nested(void);

/* CGPROBE_DEVICE_SNAPSHOTS=alloc: a checkpoint after each device allocation and free. */
bool cg_probe_device_snapshots(void);

#endif

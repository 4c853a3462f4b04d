/* SPDX-License-Identifier: MIT */
/*
 * Address ranges that stand in for GPU memory in the fake CUDA libraries
 * (fake-cudart.c, fake-cuda.c). Each arena is one reserved PROT_NONE region
 * at a fixed, recognisable address; a block handed out is made readable and
 * writable and goes back to PROT_NONE when freed, so a use after free faults
 * like it would on a GPU. Nothing here calls malloc: a probe that records the
 * host heap sees no allocations from the fakes themselves.
 */
#ifndef FAKE_ARENA_H
#define FAKE_ARENA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fake_block {
	uintptr_t addr;
	size_t len;   /* bytes reserved: the request rounded up to the alignment */
	size_t bytes; /* bytes requested */
	int tag;      /* the caller's: a device number, a kind */
};

struct fake_arena {
	const char *name;
	uintptr_t hint;    /* wanted base address; 0: anywhere */
	size_t size;       /* address space to reserve */
	bool low32;        /* below 4 GiB (MAP_32BIT), for 32-bit device pointers */
	bool reserve_only; /* hand out address ranges only; never touch protections */
	/* Set on first use. */
	pthread_mutex_t lock;
	uintptr_t base;
	struct fake_block *blocks; /* sorted by addr, in an mmap'd array */
	size_t n, cap;
	bool failed;
};

#define FAKE_ARENA_INIT(NAME, HINT, SIZE, LOW32, RESERVE_ONLY)                                     \
	{                                                                                          \
		.name = (NAME), .hint = (HINT), .size = (SIZE), .low32 = (LOW32),                  \
		.reserve_only = (RESERVE_ONLY), .lock = PTHREAD_MUTEX_INITIALIZER                  \
	}

/*
 * Hands out a block of at least bytes (> 0), aligned to align (a power of
 * two, at least 256), at *out. Returns 0 or -ENOMEM.
 */
int fake_arena_alloc(struct fake_arena *a, size_t bytes, size_t align, int tag, uintptr_t *out);
/* Same at a caller-chosen address inside the arena (cuMemAddressReserve's addr hint). */
int fake_arena_alloc_at(struct fake_arena *a, uintptr_t addr, size_t bytes, int tag);
/* Ends the block that starts at addr; its record in *gone. Returns 0 or -ENOENT. */
int fake_arena_free(struct fake_arena *a, uintptr_t addr, struct fake_block *gone);
/* The block that starts at addr, or -ENOENT. */
int fake_arena_find(struct fake_arena *a, uintptr_t addr, struct fake_block *out);
/* The block that holds addr (anywhere inside it), or -ENOENT. */
int fake_arena_find_inside(struct fake_arena *a, uintptr_t addr, struct fake_block *out);
bool fake_arena_contains(const struct fake_arena *a, uintptr_t addr);

/* FAKE_CUDA_OOM_BYTES: allocations above it fail. UINT64_MAX when unset. */
uint64_t fake_oom_limit(void);
/* Counts len bytes against a device's *used, or false when that would pass its capacity. */
bool fake_charge(size_t *used, size_t capacity, size_t len);
void fake_uncharge(size_t *used, size_t len);
/* True when FAKE_CUDA_LOG=1. */
bool fake_log_enabled(void);
/* One line on stderr, written with one write(2), no heap. */
__attribute__((format(printf, 1, 2))) void fake_log(const char *fmt, ...);

#endif

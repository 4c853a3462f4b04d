/* SPDX-License-Identifier: MIT */
/*
 * dlsym: XLA, TensorFlow and nvcc's static runtime find the driver with
 * dlopen + dlsym, which searches only libcuda's own tree and would never
 * see the preloaded wrappers. Names the probe wraps get their wrapper; the
 * rest go straight to the real dlsym by a tail jump, so the loader still
 * sees the caller's return address and RTLD_NEXT keeps meaning "next after
 * the caller" (a second preloaded library using it must not reach itself).
 */
#include <dlfcn.h>
#include <stdint.h>

#include "driver.h"
#include "probe.h"

void *cg_dlsym_wrapped(void *handle, const char *name);
void *cg_dlsym_slow(void *handle, const char *name);

/* Only driver names the probe wraps: "cu" and then a table lookup. */
void *cg_dlsym_wrapped(void *handle, const char *name)
{
	void *wrapper = cg_drv_wrapper_by_name(name);
	void *real = cg_probe_dlsym(handle, name);
	if (!wrapper || !real || real == wrapper)
		return real;
	return cg_drv_substitute(real);
}

/* Before the real functions are known (the very first calls): plain call. */
void *cg_dlsym_slow(void *handle, const char *name)
{
	if (!cg_probe_real_init())
		return NULL;
	if (name && name[0] == 'c' && name[1] == 'u')
		return cg_dlsym_wrapped(handle, name);
	return cg_probe_dlsym(handle, name);
}

#if defined(__x86_64__)
/*
 * In assembly so the pass-through is a jump whatever the optimisation
 * level: a C tail call is only a hope at -O0.
 */
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"	.cfi_startproc\n"
	"	testq %rsi, %rsi\n"
	"	jz 1f\n"
	"	cmpb $0x63, (%rsi)\n" /* 'c' */
	"	jne 1f\n"
	"	cmpb $0x75, 1(%rsi)\n" /* 'u' */
	"	jne 1f\n"
	"	cmpq $0, cg_probe_dlsym(%rip)\n"
	"	je 2f\n"
	"	jmp cg_dlsym_wrapped\n"
	"1:	movq cg_probe_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	jmp *%rax\n"
	"2:	jmp cg_dlsym_slow\n"
	"	.cfi_endproc\n"
	".size dlsym, .-dlsym\n");
#else
CG_PROBE_EXPORT void *dlsym(void *handle, const char *name)
{
	void *(*real)(void *, const char *) = __atomic_load_n(&cg_probe_dlsym, __ATOMIC_ACQUIRE);
	if (!real || (name && name[0] == 'c' && name[1] == 'u'))
		return cg_dlsym_slow(handle, name);
	return real(handle, name);
}
#endif

/* SPDX-License-Identifier: MIT */
/*
 * The stamps must sort the events of all threads as they happened, so the
 * probe reads the TSC only where the kernel's own CLOCK_MONOTONIC is the
 * TSC on every CPU:
 *
 * - the clocksource is `tsc`: the kernel checked the counters agree;
 * - the clocksource is `kvm-clock` and the host sets PVCLOCK_TSC_STABLE_BIT
 *   in the vCPU time page. kvm-clock is the guest's TSC, scaled; with
 *   that bit the host promises the scaling is one for all vCPUs, and only
 *   then does the vDSO read CLOCK_MONOTONIC from the TSC instead of making
 *   a system call. The probe's lfence-and-rdtsc is the vDSO's own read.
 *
 * Everywhere else (a host without the bit, Hyper-V, Xen, other
 * architectures) the hooks call clock_gettime.
 */
#include "clock_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "sysline.h"

#if defined(__x86_64__)
#define PVCLOCK_TSC_STABLE_BIT 1

/* The layout of the kernel's struct pvclock_vcpu_time_info (an ABI). */
struct pvclock_time {
	uint32_t version; /* odd while the host updates the page */
	uint32_t pad0;
	uint64_t tsc_timestamp;
	uint64_t system_time;
	uint32_t tsc_to_system_mul;
	int8_t tsc_shift;
	uint8_t flags;
	uint8_t pad[2];
};

/* The hexadecimal number a maps line starts with. */
static uintptr_t hex_prefix(const char *s)
{
	uintptr_t v = 0;
	for (;; s++) {
		unsigned d = *s >= '0' && *s <= '9'   ? (unsigned)(*s - '0')
		             : *s >= 'a' && *s <= 'f' ? (unsigned)(*s - 'a' + 10)
		                                      : 16u;
		if (d == 16)
			return v;
		v = v << 4 | d;
	}
}

/*
 * The start of the vCPU time page in /proc/self/maps: the mapping
 * [vvar_vclock] (recent kernels), else the second page of [vvar], where
 * earlier kernels put it; 0 when neither is found. Read in pieces without
 * allocating: the session may start before main.
 */
static uintptr_t pvclock_page(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	size_t have = 0;
	bool skip = false; /* in a line longer than the buffer (a long path): not ours */
	uintptr_t vclock = 0, vvar = 0;
	ssize_t n;
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			if (!skip && strstr(line, "[vvar_vclock]"))
				vclock = hex_prefix(line);
			else if (!skip && strstr(line, "[vvar]"))
				vvar = hex_prefix(line);
			skip = false;
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1) {
			have = 0;
			skip = true;
		}
	}
	close(fd);
	if (vclock)
		return vclock;
	return vvar ? vvar + (uintptr_t)sysconf(_SC_PAGESIZE) : 0;
}

/*
 * A copy of the page's head that cannot fault: a page of [vvar] the
 * kernel does not serve raises SIGBUS when read, but fails a write(2)
 * from it with EFAULT.
 */
static bool copy_page_head(struct pvclock_time *out, uintptr_t page)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return false;
	bool ok = write(p[1], (const void *)page, sizeof(*out)) == (ssize_t)sizeof(*out) &&
	          read(p[0], out, sizeof(*out)) == (ssize_t)sizeof(*out);
	close(p[0]);
	close(p[1]);
	return ok;
}

/* Nanoseconds for d ticks by the page's scale, as the kernel computes them. */
static uint64_t scaled(const struct pvclock_time *pv, uint64_t d)
{
	d = pv->tsc_shift < 0 ? d >> -pv->tsc_shift : d << pv->tsc_shift;
	return (uint64_t)(((unsigned __int128)d * pv->tsc_to_system_mul) >> 32);
}

/*
 * The page is the vCPU time page: its scale turns 50 us of TSC into the
 * 50 us CLOCK_MONOTONIC saw, within 2% and 1 us (preemption in between
 * fails it, which only keeps clock_gettime). Guards the [vvar] guess.
 */
static bool scale_agrees(const struct pvclock_time *pv)
{
	uint64_t t0 = __rdtsc(), n0 = cg_clock_mono_ns(), n1;
	while ((n1 = cg_clock_mono_ns()) - n0 < 50000)
		;
	uint64_t t1 = __rdtsc();
	uint64_t want = n1 - n0, got = scaled(pv, t1 - t0);
	uint64_t diff = got > want ? got - want : want - got;
	return diff <= want / 50 + 1000;
}

static bool kvm_clock_stable(void)
{
	struct pvclock_time pv;
	uintptr_t page = pvclock_page();
	for (int tries = 0; page && tries < 3; tries++) {
		if (!copy_page_head(&pv, page))
			return false;
		if (pv.version & 1)
			continue;
		if (!(pv.flags & PVCLOCK_TSC_STABLE_BIT) || !pv.tsc_to_system_mul ||
		    pv.tsc_shift < -31 || pv.tsc_shift > 31)
			return false;
		if (scale_agrees(&pv))
			return true;
	}
	return false;
}
#endif

bool cg_clock_source_tsc(void)
{
#if defined(__x86_64__)
	int saved = errno;
	char name[64];
	cg_sysline("/sys/devices/system/clocksource/clocksource0/current_clocksource", name,
		   sizeof(name));
	bool tsc = !strcmp(name, "tsc") || (!strcmp(name, "kvm-clock") && kvm_clock_stable());
	errno = saved;
	return tsc;
#else
	return false;
#endif
}

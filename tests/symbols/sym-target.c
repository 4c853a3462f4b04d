/* SPDX-License-Identifier: MIT */
/*
 * A program with known call chains for the symbol tests. `sym-target
 * trace` writes a trace/6 trace of its own allocations with their stacks
 * and its modules, as the probe records them: each stack is the return
 * addresses above the fake allocator take(), innermost first. The lines
 * each frame must resolve to are printed as `# expect` comments.
 *
 *	fill_a -> alloc_twice -> inl_helper (inlined) -> take	(leaf site)
 *	fill_b -> alloc_twice -> inl_helper (inlined) -> take	(the same site, second caller)
 *	leak_one -> take					(never freed)
 *	deep_outer -> inl_mid -> inl_leaf -> take		(two inlined, in sym-inl.h)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEPTH 32

static void *stack_of[8][DEPTH];
static int depth_of[8], n_stacks;

/* The allocator stand-in: records the stack above it and returns its id. */
__attribute__((noipa)) static int take(void)
{
	void *buf[DEPTH + 4];
	int n = backtrace(buf, DEPTH + 4), k = 0;
	/* From take's return address on, whatever frames backtrace adds (a sanitizer's). */
	while (k < n && buf[k] != __builtin_return_address(0))
		k++;
	int id = n_stacks++;
	depth_of[id] = n - k > DEPTH ? DEPTH : n - k;
	memcpy(stack_of[id], buf + k, (size_t)depth_of[id] * sizeof(void *));
	return id;
}

static int line_take_in_helper, line_helper_in_twice, line_twice_in_a, line_twice_in_b,
    line_take_in_leak, line_take_in_leaf, line_leaf_in_mid, line_mid_in_outer;

#include "sym-inl.h"

static inline __attribute__((always_inline)) int inl_helper(void)
{
	line_take_in_helper = __LINE__ + 1;
	int id = take();
	return id;
}

__attribute__((noipa)) static int alloc_twice(void)
{
	line_helper_in_twice = __LINE__ + 1;
	int id = inl_helper();
	__asm__ volatile("" ::: "memory");
	return id;
}

__attribute__((noipa)) static int fill_a(void)
{
	line_twice_in_a = __LINE__ + 1;
	int id = alloc_twice();
	__asm__ volatile("" ::: "memory");
	return id;
}

__attribute__((noipa)) static int fill_b(void)
{
	line_twice_in_b = __LINE__ + 1;
	int id = alloc_twice();
	__asm__ volatile("" ::: "memory");
	return id;
}

__attribute__((noipa)) static int leak_one(void)
{
	line_take_in_leak = __LINE__ + 1;
	int id = take();
	__asm__ volatile("" ::: "memory");
	return id;
}

__attribute__((noipa)) static int deep_outer(void)
{
	line_mid_in_outer = __LINE__ + 1;
	int id = inl_mid();
	__asm__ volatile("" ::: "memory");
	return id;
}

/* The modules as the probe records them: bias, PT_LOAD range, GNU build id. */
struct module_info {
	uintptr_t lo, hi;
	char id[129];
	char path[4096];
};

static int module_info(struct dl_phdr_info *info, struct module_info *m)
{
	m->lo = UINTPTR_MAX;
	m->hi = 0;
	m->id[0] = '\0';
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD) {
			uintptr_t a = info->dlpi_addr + ph->p_vaddr;
			if (a < m->lo)
				m->lo = a;
			if (a + ph->p_memsz > m->hi)
				m->hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_NOTE) {
			const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
			const char *end = p + ph->p_memsz;
			while (p + sizeof(ElfW(Nhdr)) <= end) {
				const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
				const char *name = p + sizeof(*nh);
				const unsigned char *desc =
				    (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
				if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
				    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= 64)
					for (unsigned k = 0; k < nh->n_descsz; k++)
						sprintf(m->id + 2 * k, "%02x", desc[k]);
				p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
			}
		}
	}
	const char *name = info->dlpi_name;
	if (!name[0]) {
		ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);
		m->path[n > 0 ? n : 0] = '\0';
	} else {
		snprintf(m->path, sizeof(m->path), "%s", name);
	}
	return m->path[0] == '/' && m->hi != 0;
}

static int print_module(struct dl_phdr_info *info, size_t size, void *user)
{
	int *first = user;
	struct module_info m;
	if (!module_info(info, &m))
		return 0;
	printf("%s{\"path\":\"%s\",\"base\":\"0x%lx\",\"start\":\"0x%lx\",\"end\":\"0x%lx\"",
	       *first ? "" : ",", m.path, (unsigned long)info->dlpi_addr, (unsigned long)m.lo,
	       (unsigned long)m.hi);
	if (m.id[0])
		printf(",\"build_id\":\"%s\"", m.id);
	printf("}");
	*first = 0;
	return 0;
}

static void print_expect(FILE *f)
{
	fprintf(f, "expect %s %d %d %d %d %d\n", __FILE__, line_take_in_helper,
	        line_helper_in_twice, line_twice_in_a, line_twice_in_b, line_take_in_leak);
}

/* The lines of stack 4, which the trace leaves out: stacks-cli reads the one above. */
static void print_expect_deep(FILE *f)
{
	fprintf(f, "deep sym-inl.h %d %d %d\n", line_take_in_leaf, line_leaf_in_mid,
	        line_mid_in_outer);
}

static int print_module_line(struct dl_phdr_info *info, size_t size, void *user)
{
	struct module_info m;
	if (module_info(info, &m))
		printf("module %s 0x%lx 0x%lx 0x%lx %s\n", m.path, (unsigned long)info->dlpi_addr,
		       (unsigned long)m.lo, (unsigned long)m.hi, m.id[0] ? m.id : "-");
	return 0;
}

static void print_frames(int id)
{
	printf(",\"cgprobe_stack_frames\":[");
	for (int k = 0; k < depth_of[id]; k++)
		printf("%s\"0x%lx\"", k ? "," : "", (unsigned long)(uintptr_t)stack_of[id][k]);
	printf("]");
}

#define MEM(ts, addr, bytes, action)                                                               \
	printf(                                                                                    \
	    "{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"0x%x\",\"span_id\":\"s1\","  \
	    "\"device\":\"cpu\",\"bytes\":%d,\"action\":\"%s\",\"shape\":[%d],\"dtype\":\"u8\","   \
	    "\"category\":\"other\"",                                                              \
	    ts, addr, bytes, action, bytes)

int main(int argc, char **argv)
{
	int a = fill_a(), b = fill_b(), l = leak_one(), d = deep_outer();
	if (argc < 2 || strcmp(argv[1], "trace") != 0) {
		/* Plain lines for the unit tests: modules, stacks, the lines expected. */
		dl_iterate_phdr(print_module_line, NULL);
		for (int id = 0; id < n_stacks; id++) {
			printf("stack %d", id + 1);
			for (int k = 0; k < depth_of[id]; k++)
				printf(" 0x%lx", (unsigned long)(uintptr_t)stack_of[id][k]);
			printf("\n");
		}
		print_expect(stdout);
		print_expect_deep(stdout);
		return d < 0;
	}
	printf("{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"r\","
	       "\"correlation_id\":\"sym/update-1\",\"entrypoint\":\"sym\",\"phase\":\"train\","
	       "\"timestamp\":\"2026-12-01T00:00:00Z\",\"capture_step\":1,\"warmup_steps\":0,"
	       "\"device\":\"cpu\",\"timing_mode\":\"host\",\"tags\":{\"cgprobe_stack_depth\":"
	       "\"32\"}}\n");
	printf("{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"sym\",\"start_ns\":0,"
	       "\"span_kind\":\"function\",\"measured\":true}\n");
	/* fill_a: 1000 bytes, freed at once (temporary); fill_b: 300 held; leak_one: 64 never
	 * freed. */
	MEM(10, 0x1000, 1000, "alloc");
	printf(",\"cgprobe_stack\":%d", a + 1);
	print_frames(a);
	int first = 1;
	printf(",\"cgprobe_modules\":[");
	dl_iterate_phdr(print_module, &first);
	printf("]}\n");
	MEM(20, 0x1000, 1000, "free");
	printf("}\n");
	MEM(30, 0x2000, 300, "alloc");
	printf(",\"cgprobe_stack\":%d", b + 1);
	print_frames(b);
	printf("}\n");
	MEM(40, 0x3000, 64, "alloc");
	printf(",\"cgprobe_stack\":%d", l + 1);
	print_frames(l);
	printf("}\n");
	MEM(50, 0x4000, 200, "alloc");
	printf(",\"cgprobe_stack\":%d}\n", b + 1);
	MEM(60, 0x2000, 300, "free");
	printf("}\n");
	MEM(70, 0x4000, 200, "free");
	printf("}\n");
	printf("{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":100}\n");
	print_expect(stderr);
	return 0;
}

/* SPDX-License-Identifier: MIT */
#include "modules.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "event.h"
#include "process.h"
#include "push.h"
#include "stack.h"

/* The loader's count of loads when the modules were last sent. */
static atomic_ullong sent_adds;

#define BUILD_ID_MAX (CG_BUILD_ID_HEX_MAX / 2)

/* The GNU build id note of a module, in memory; its length, 0 when none. */
static size_t build_id(const struct dl_phdr_info *info, const uint8_t **out)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t name = (nh->n_namesz + 3) & ~3u, desc = (nh->n_descsz + 3) & ~3u;
			const uint8_t *d = p + sizeof(*nh) + name;
			if (d + desc > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(p + sizeof(*nh), "GNU", 4) == 0 && nh->n_descsz > 0 &&
			    nh->n_descsz <= BUILD_ID_MAX) {
				*out = d;
				return nh->n_descsz;
			}
			p = d + desc;
		}
	}
	return 0;
}

/* The main program's dlpi_name is empty: its path is the executable's. */
static const char *path_of(const struct dl_phdr_info *info)
{
	if (info->dlpi_name && info->dlpi_name[0])
		return info->dlpi_name;
	return cg_process.exe_path[0] ? cg_process.exe_path : NULL;
}

struct walk {
	struct cg_modules *m; /* NULL: counting */
	size_t count, bytes, cap_count;
	char *str, *str_end;
	unsigned long long adds;
};

static int each(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
		w->adds = info->dlpi_adds;
	const char *path = path_of(info);
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (!path || hi <= lo)
		return 0;
	const uint8_t *id = NULL;
	size_t id_len = build_id(info, &id);
	size_t path_len = strlen(path);
	if (path_len > 4096)
		return 0;
	size_t need = path_len + 1 + (id_len ? 2 * id_len + 1 : 0);
	if (!w->m) {
		w->count++;
		w->bytes += need;
		return 0;
	}
	/* Loaded since the count: what does not fit waits for the next list. */
	if (w->m->count == w->cap_count || (size_t)(w->str_end - w->str) < need)
		return 0;
	struct cg_modv *v = &w->m->mod[w->m->count++];
	memcpy(w->str, path, path_len + 1);
	v->path = (struct cg_sv){w->str, (uint32_t)path_len};
	w->str += path_len + 1;
	v->base = info->dlpi_addr;
	v->start = lo;
	v->end = hi;
	v->build_id = (struct cg_sv){NULL, 0};
	if (id_len) {
		static const char hex[] = "0123456789abcdef";
		for (size_t i = 0; i < id_len; i++) {
			w->str[2 * i] = hex[id[i] >> 4];
			w->str[2 * i + 1] = hex[id[i] & 15];
		}
		w->str[2 * id_len] = '\0';
		v->build_id = (struct cg_sv){w->str, (uint32_t)(2 * id_len)};
		w->str += 2 * id_len + 1;
	}
	return 0;
}

void cg_modules_announce(bool force)
{
	struct walk w = {0};
	dl_iterate_phdr(each, &w);
	if (!force && w.adds == atomic_load(&sent_adds))
		return;
	/* Room for a few loads between the two walks. */
	w.cap_count = w.count + 16;
	size_t len =
	    sizeof(struct cg_modules) + w.cap_count * sizeof(struct cg_modv) + w.bytes + 16 * 4096;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	w.m = p;
	w.m->map_len = len;
	w.m->count = 0;
	w.str = (char *)&w.m->mod[w.cap_count];
	w.str_end = (char *)p + len;
	dl_iterate_phdr(each, &w);
	atomic_store(&sent_adds, w.adds);
	struct cg_event e = {
	    cg_stamp(false), (uint64_t)(uintptr_t)w.m, len, 0, CG_EV_MODULES, 0, 0, 0};
	if (!cg_push_n(&e, 1))
		munmap(p, len);
}

#define RANGES_MAX 4096

struct cg_modules_ranges {
	size_t n;
	bool overflow;
	struct {
		uintptr_t lo, hi;
	} r[RANGES_MAX];
};

/* Each module's executable PT_LOAD ranges: only code holds return addresses. */
static int each_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct cg_modules_ranges *m = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (m->n == RANGES_MAX) {
			m->overflow = true;
			return 1;
		}
		m->r[m->n].lo = info->dlpi_addr + ph->p_vaddr;
		m->r[m->n].hi = m->r[m->n].lo + ph->p_memsz;
		m->n++;
	}
	return 0;
}

struct cg_modules_ranges *cg_modules_before_close(void)
{
	void *p = mmap(NULL, 2 * sizeof(struct cg_modules_ranges), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	struct cg_modules_ranges *m = p;
	dl_iterate_phdr(each_range, m);
	return m;
}

void cg_modules_after_close(struct cg_modules_ranges *before, bool closed)
{
	if (!before)
		return;
	if (!closed) {
		munmap(before, 2 * sizeof(struct cg_modules_ranges));
		return;
	}
	struct cg_modules_ranges *after = before + 1;
	dl_iterate_phdr(each_range, after);
	bool gone = false;
	for (size_t i = 0; i < before->n; i++) {
		bool kept = false;
		for (size_t k = 0; k < after->n && !kept; k++)
			kept =
			    after->r[k].lo == before->r[i].lo && after->r[k].hi == before->r[i].hi;
		if (!kept) {
			cg_stack_unloaded(before->r[i].lo, before->r[i].hi);
			gone = true;
		}
	}
	/* A list cut short: what was unmapped is not known, so every range is suspect. */
	if (before->overflow || after->overflow)
		cg_stack_unloaded(0, UINTPTR_MAX);
	if (gone || before->overflow || after->overflow)
		cg_stack_unload_done();
	munmap(before, 2 * sizeof(struct cg_modules_ranges));
}

static bool dyn_has(const ElfW(Dyn) * d, ElfW(Sxword) tag)
{
	for (; d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == tag)
			return true;
	return false;
}

static int any_rpath(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	/* The main program's RPATH is read whoever calls: only the others count. */
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC &&
		    dyn_has((const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
		            DT_RPATH)) {
			*(bool *)arg = true;
			return 1;
		}
	return 0;
}

bool cg_modules_caller_matters(const char *file, const void *caller, bool namespace)
{
	if (!file)
		return false;
	if (strchr(file, '$'))
		return true;
	Dl_info info;
	struct link_map *lm = NULL;
	if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return true; /* code in no module: the loader takes the main program's */
	Lmid_t ns = LM_ID_BASE;
	if (namespace && (dlinfo(lm, RTLD_DI_LMID, &ns) != 0 || ns != LM_ID_BASE))
		return true;
	if (strchr(file, '/'))
		return false;
	if (dyn_has(lm->l_ld, DT_RUNPATH) || dyn_has(lm->l_ld, DT_RPATH))
		return true;
	bool rpath = false;
	dl_iterate_phdr(any_rpath, &rpath);
	return rpath;
}

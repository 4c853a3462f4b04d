/* SPDX-License-Identifier: MIT */
/*
 * The host entry points: the wrapped heap, exit, exec, dlopen and signal
 * functions and the annotation API (cuda/exports-*.c hold the CUDA ones,
 * cuda/dl.c dlsym). Each forwards to the real function through cg_real and
 * leaves the recording to hooks.c; inside the probe (guard set), before
 * the table is filled, or when not recording, it is a plain pass-through.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The probe defines the functions the _opt forms would look up. */
#define CGPROBE_NO_OPT
#include "cgprobe.h"
#include "cgtrace.h"
#include "hooks.h"
#include "modules.h"
#include "marks.h"
#include "probe.h"
#include "process_group.h"
#include "real.h"
#include "session.h"
#include "signals.h"
#include "span_blob.h"
#include "spans.h"
#include "stack.h"
#include "state.h"
#include "stepmap.h"
#include "thread.h"
#include "updates.h"
#include "warn.h"
#include "writer.h"


static inline bool ready(void)
{
	if (__builtin_expect(cg_real_ready(), 1))
		return true;
	cg_real_init();
	return cg_real_ready();
}

static inline bool passthrough(void)
{
	return cg_self.guard || !cg_recording();
}

CG_PROBE_EXPORT void *malloc(size_t n)
{
	if (!ready())
		return cg_boot_alloc(n, 16, false);
	if (passthrough())
		return cg_real.malloc(n);
	cg_self.guard++;
	void *p = cg_real.malloc(n);
	if (p)
		cg_hook_alloc(p, n, CG_OP_MALLOC);
	cg_self.guard--;
	return p;
}

CG_PROBE_EXPORT void *calloc(size_t n, size_t size)
{
	if (!ready()) {
		size_t total;
		if (__builtin_mul_overflow(n, size, &total))
			return NULL;
		return cg_boot_alloc(total, 16, true);
	}
	if (passthrough())
		return cg_real.calloc(n, size);
	cg_self.guard++;
	void *p = cg_real.calloc(n, size);
	if (p)
		cg_hook_alloc(p, n * size, CG_OP_CALLOC);
	cg_self.guard--;
	return p;
}

CG_PROBE_EXPORT void free(void *p)
{
	if (!p || cg_boot_owns(p) || !ready())
		return;
	if (passthrough()) {
		cg_real.free(p);
		return;
	}
	cg_self.guard++;
	cg_hook_free(p, CG_OP_FREE);
	cg_real.free(p);
	cg_self.guard--;
}

/* A block from the bootstrap pool moves to the real heap on its first realloc. */
static void *realloc_boot(void *p, size_t n)
{
	void *q = malloc(n);
	if (q) {
		size_t old = cg_boot_size(p);
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}

static void *realloc_common(void *p, size_t n, size_t count, bool array)
{
	struct cg_realloc_state st;
	size_t total = n;
	if (array && __builtin_mul_overflow(count, n, &total))
		total = SIZE_MAX; /* the real reallocarray reports ENOMEM */
	if (passthrough())
		return array ? cg_real.reallocarray(p, count, n) : cg_real.realloc(p, n);
	cg_self.guard++;
	cg_hook_realloc_begin(p, &st);
	void *q = array ? cg_real.reallocarray(p, count, n) : cg_real.realloc(p, n);
	cg_hook_realloc_end(p, q, total, array ? CG_OP_REALLOCARRAY : CG_OP_REALLOC, &st);
	cg_self.guard--;
	return q;
}

CG_PROBE_EXPORT void *realloc(void *p, size_t n)
{
	if (p && cg_boot_owns(p))
		return realloc_boot(p, n);
	if (!ready())
		return p ? NULL : cg_boot_alloc(n, 16, false);
	return realloc_common(p, n, 1, false);
}

CG_PROBE_EXPORT void *reallocarray(void *p, size_t count, size_t n)
{
	size_t total;
	if (p && cg_boot_owns(p)) {
		if (__builtin_mul_overflow(count, n, &total)) {
			errno = ENOMEM;
			return NULL;
		}
		return realloc_boot(p, total);
	}
	if (!ready() || !cg_real.reallocarray) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc_common(p, n, count, true);
}

CG_PROBE_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (!ready()) {
		void *p = cg_boot_alloc(n, align, false);
		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	if (passthrough())
		return cg_real.posix_memalign(out, align, n);
	cg_self.guard++;
	int r = cg_real.posix_memalign(out, align, n);
	if (r == 0)
		cg_hook_alloc(*out, n, CG_OP_POSIX_MEMALIGN);
	cg_self.guard--;
	return r;
}

/* aligned_alloc, memalign, valloc and pvalloc share one shape. */
#define ALIGNED_WRAPPER(name, op, params, args, size, align)                                  \
	CG_PROBE_EXPORT void *name params                                                      \
	{                                                                                      \
		if (!ready())                                                                  \
			return cg_boot_alloc(size, align, false);                              \
		if (passthrough())                                                             \
			return cg_real.name args;                                              \
		cg_self.guard++;                                                               \
		void *p = cg_real.name args;                                                   \
		if (p)                                                                         \
			cg_hook_alloc(p, size, op);                                            \
		cg_self.guard--;                                                               \
		return p;                                                                      \
	}

ALIGNED_WRAPPER(aligned_alloc, CG_OP_ALIGNED_ALLOC, (size_t align, size_t n), (align, n), n,
		align)
ALIGNED_WRAPPER(memalign, CG_OP_MEMALIGN, (size_t align, size_t n), (align, n), n, align)
ALIGNED_WRAPPER(valloc, CG_OP_VALLOC, (size_t n), (n), n, 4096)
ALIGNED_WRAPPER(pvalloc, CG_OP_PVALLOC, (size_t n), (n), n, 4096)

CG_PROBE_EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (cg_boot_owns(p))
		return cg_boot_size(p);
	return ready() && cg_real.malloc_usable_size ? cg_real.malloc_usable_size(p) : 0;
}

/* ------------------------------------------------------------------ */
/* Exit and exec paths                                                 */
/* ------------------------------------------------------------------ */

/*
 * The guard goes back before the real call: a vfork child's _exit runs on
 * its parent's thread and memory, and the parent must find it as it was.
 */
CG_PROBE_EXPORT void _exit(int status)
{
	cg_self.guard++;
	cg_session_end(5000);
	cg_self.guard--;
	if (!ready())
		abort();
	cg_real._exit(status);
}

CG_PROBE_EXPORT void _Exit(int status)
{
	cg_self.guard++;
	cg_session_end(5000);
	cg_self.guard--;
	if (!ready())
		abort();
	cg_real._Exit(status);
}

/* The variants libc implements without going through execve's PLT entry. */
static void *next_fn(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static int exec_prepare(void)
{
	int saved = errno;
	cg_self.guard++;
	cg_session_before_exec();
	cg_self.guard--;
	errno = saved;
	return 0;
}

/* The exec failed and the program goes on: so does recording. Keeps errno and r. */
static int exec_failed(int r)
{
	int saved = errno;
	cg_self.guard++;
	cg_session_exec_failed();
	cg_self.guard--;
	errno = saved;
	return r;
}

CG_PROBE_EXPORT int execve(const char *file, char *const argv[], char *const envp[])
{
	exec_prepare();
	return exec_failed(ready() ? cg_real.execve(file, argv, envp) : (errno = ENOSYS, -1));
}

CG_PROBE_EXPORT int execveat(int dirfd, const char *file, char *const argv[], char *const envp[],
			     int flags)
{
	exec_prepare();
	return exec_failed(ready() && cg_real.execveat
				   ? cg_real.execveat(dirfd, file, argv, envp, flags)
				   : (errno = ENOSYS, -1));
}

CG_PROBE_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	exec_prepare();
	return exec_failed(ready() && cg_real.fexecve ? cg_real.fexecve(fd, argv, envp)
						      : (errno = ENOSYS, -1));
}

CG_PROBE_EXPORT int execv(const char *file, char *const argv[])
{
	static int (*real)(const char *, char *const[]);
	if (!real)
		real = next_fn("execv");
	exec_prepare();
	return exec_failed(real ? real(file, argv) : (errno = ENOSYS, -1));
}

CG_PROBE_EXPORT int execvp(const char *file, char *const argv[])
{
	static int (*real)(const char *, char *const[]);
	if (!real)
		real = next_fn("execvp");
	exec_prepare();
	return exec_failed(real ? real(file, argv) : (errno = ENOSYS, -1));
}

CG_PROBE_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	static int (*real)(const char *, char *const[], char *const[]);
	if (!real)
		real = next_fn("execvpe");
	exec_prepare();
	return exec_failed(real ? real(file, argv, envp) : (errno = ENOSYS, -1));
}

/* execl* take their arguments as varargs: gather them, then take the v path. */
static char **gather(const char *arg0, va_list ap, char ***envp)
{
	va_list count;
	size_t n = 1;
	va_copy(count, ap);
	while (va_arg(count, char *))
		n++;
	va_end(count);
	/* The probe's own allocation: not the program's, so not recorded. */
	char **argv = ready() ? cg_real.malloc((n + 1) * sizeof(*argv)) : NULL;
	if (!argv)
		return NULL;
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(ap, char *);
	if (envp)
		*envp = va_arg(ap, char **);
	return argv;
}

/* After an exec that failed: the gathered argv goes, errno stays. */
static int release(char **argv, int r)
{
	int saved = errno;
	cg_real.free(argv);
	errno = saved;
	return r;
}

/* execl and execlp: the list gathered, then the v variant; ap is the caller's to end. */
static int exec_list(int (*exec_v)(const char *, char *const[]), const char *file,
		     const char *arg0, va_list ap)
{
	char **argv = gather(arg0, ap, NULL);
	return argv ? release(argv, exec_v(file, argv)) : -1;
}

#define EXEC_LIST(name, exec_v)                                                               \
	CG_PROBE_EXPORT int name(const char *file, const char *arg0, ...)                      \
	{                                                                                      \
		va_list ap;                                                                    \
		va_start(ap, arg0);                                                            \
		int r = exec_list(exec_v, file, arg0, ap);                                     \
		va_end(ap);                                                                    \
		return r;                                                                      \
	}

EXEC_LIST(execl, execv)
EXEC_LIST(execlp, execvp)

CG_PROBE_EXPORT int execle(const char *file, const char *arg0, ...)
{
	va_list ap;
	char **envp;
	va_start(ap, arg0);
	char **argv = gather(arg0, ap, &envp);
	va_end(ap);
	return argv ? release(argv, execve(file, argv, envp)) : -1;
}

/* ------------------------------------------------------------------ */
/* Loader and signals                                                  */
/* ------------------------------------------------------------------ */

/* RTLD_DEEPBIND would bind the library's own malloc calls past the probe. */
static int no_deepbind(const char *file, int flags)
{
	if (__builtin_expect(flags & RTLD_DEEPBIND, 0)) {
		static atomic_int warned;
		if (!atomic_exchange(&warned, 1))
			cg_warn("dlopen(", file ? file : "NULL",
				", RTLD_DEEPBIND): flag removed so the library's allocations "
				"stay visible",
				NULL);
		flags &= ~RTLD_DEEPBIND;
	}
	return flags;
}

/* Set when a load could not be followed by a module list: the next dlopen sends one first. */
static atomic_int modules_stale;

/*
 * Before a dlopen: whether its caller matters to the loader (modules.h),
 * which then must see the caller's return address, so the call stays in
 * tail position and its modules are sent by the next dlopen. Modules left
 * unsent by such a call go now. Errno and dlerror() are left as they were.
 */
static bool dlopen_prepare(const char *file, const void *caller, bool namespace)
{
	if (!cg_stack_depth || !cg_recording() || cg_self.guard)
		return true;
	int saved = errno;
	cg_self.guard++;
	if (atomic_exchange(&modules_stale, 0))
		cg_modules_announce(false);
	bool tail = cg_modules_caller_matters(file, caller, namespace);
	if (tail)
		atomic_store(&modules_stale, 1);
	cg_self.guard--;
	errno = saved;
	return tail;
}

/* After a dlopen that returned here: the modules it loaded, for the next memory record. */
static void *dlopen_done(void *h)
{
	if (h && cg_recording()) {
		int saved = errno;
		cg_self.guard++;
		cg_modules_announce(false);
		cg_self.guard--;
		errno = saved;
	}
	return h;
}

/*
 * The loader reads its caller's return address ($ORIGIN, RUNPATH, the
 * namespace): when that matters the real call stays in tail position.
 */
CG_PROBE_EXPORT void *dlopen(const char *file, int flags)
{
	flags = no_deepbind(file, flags);
	if (!ready())
		return NULL;
	if (dlopen_prepare(file, __builtin_return_address(0), true))
		return cg_real.dlopen(file, flags);
	return dlopen_done(cg_real.dlopen(file, flags));
}

CG_PROBE_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int flags)
{
	flags = no_deepbind(file, flags);
	if (!ready() || !cg_real.dlmopen)
		return NULL;
	if (dlopen_prepare(file, __builtin_return_address(0), false))
		return cg_real.dlmopen(lmid, file, flags);
	return dlopen_done(cg_real.dlmopen(lmid, file, flags));
}

/*
 * The code a dlclose unmaps may be replaced by other code at the same
 * addresses: stack.c must know (cg_stack_unloaded). The caller's address
 * does not matter to dlclose, so the call need not be a tail call.
 */
CG_PROBE_EXPORT int dlclose(void *handle)
{
	if (!ready() || !cg_real.dlclose)
		return -1;
	if (!cg_stack_depth || !cg_recording() || cg_self.guard)
		return cg_real.dlclose(handle);
	int saved = errno;
	cg_self.guard++;
	struct cg_modules_ranges *before = cg_modules_before_close();
	cg_self.guard--;
	errno = saved;
	int r = cg_real.dlclose(handle);
	saved = errno;
	cg_self.guard++;
	cg_modules_after_close(before, r == 0);
	cg_self.guard--;
	errno = saved;
	return r;
}

CG_PROBE_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!ready()) {
		errno = ENOSYS;
		return -1;
	}
	return cg_signals_sigaction(sig, act, old);
}

CG_PROBE_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act, old;
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* ------------------------------------------------------------------ */
/* Annotation API (include/cgprobe.h)                                  */
/* ------------------------------------------------------------------ */

/* Each runs inside the probe: what it allocates is not the program's. */
#define API_CALL(type, call)                                                                   \
	do {                                                                                   \
		cg_self.guard++;                                                               \
		type r_ = call;                                                                \
		cg_self.guard--;                                                               \
		return r_;                                                                     \
	} while (0)

CG_PROBE_EXPORT uint64_t cgprobe_span_begin(const char *name, enum cgprobe_step step)
{
	API_CALL(uint64_t, cg_span_begin(name, (uint8_t)step, CGTRACE_SPAN_FUNCTION, 0, NULL));
}

/*
 * A span named as a phase (CGPROBE_SPAN_PHASE without a step): a step's
 * name is that step, none no phase, another valid name the phase; false
 * for a name that is none of them.
 */
static bool phase_of(const char *name, enum cgprobe_step *step, struct cg_span_info *info)
{
	int k = cg_stepmap_name(name, strnlen(name, CG_PHASE_MAX + 1));
	if (k == CG_STEPMAP_PHASE)
		info->phase = name;
	else if (k >= 0)
		*step = (enum cgprobe_step)k;
	return k >= 0;
}

CG_PROBE_EXPORT uint64_t cgprobe_span_begin_ex(const char *name, enum cgprobe_step step,
					       enum cgprobe_span_kind kind, unsigned flags)
{
	struct cg_span_info info = {0};
	if ((unsigned)kind > CGTRACE_SPAN_MODULE)
		return 0;
	if ((flags & CGPROBE_SPAN_PHASE) && step == CGPROBE_STEP_NONE && name &&
	    !phase_of(name, &step, &info))
		return 0;
	API_CALL(uint64_t, cg_span_begin(name, (uint8_t)step, (uint8_t)kind,
					 flags & CGPROBE_SPAN_MEASURED ? CG_SPAN_MEASURED : 0, &info));
}

CG_PROBE_EXPORT int cgprobe_span_end(uint64_t id)
{
	API_CALL(int, cg_span_end(id));
}

CG_PROBE_EXPORT int cgprobe_gradient(const char *root, const char *key,
				     enum cgprobe_grad_state state, double norm)
{
	API_CALL(int, cg_gradient(root, key, (uint8_t)state, norm));
}

CG_PROBE_EXPORT int cgprobe_device_checkpoint(const char *device, uint64_t used_bytes,
					      uint64_t free_bytes, uint64_t reserved_bytes,
					      uint64_t allocated_bytes)
{
	API_CALL(int, cg_checkpoint(device, used_bytes, free_bytes, reserved_bytes,
				    allocated_bytes));
}

CG_PROBE_EXPORT uint64_t cgprobe_update_begin(void)
{
	API_CALL(uint64_t, cg_update_begin());
}

CG_PROBE_EXPORT int cgprobe_update_end(void)
{
	API_CALL(int, cg_update_end());
}

CG_PROBE_EXPORT int cgprobe_mark_parameters(const void *ptr, uint64_t bytes)
{
	API_CALL(int, cg_marks_add(&ptr, &bytes, 1));
}

CG_PROBE_EXPORT int cgprobe_mark_parameters_n(const void *const *ptrs, const uint64_t *bytes,
					      size_t n)
{
	API_CALL(int, cg_marks_add(ptrs, bytes, n));
}

CG_PROBE_EXPORT int cgprobe_thread_name(const char *name)
{
	API_CALL(int, cg_thread_set_name(name));
}

CG_PROBE_EXPORT int cgprobe_process_rank(int64_t rank, int64_t world_size)
{
	API_CALL(int, cg_process_group(rank, world_size));
}

CG_PROBE_EXPORT int cgprobe_flush(void)
{
	if (!cg_recording())
		return -ENODEV;
	cg_self.guard++;
	int r = cg_writer_request(CG_REQ_SYNC, 5000);
	cg_self.guard--;
	return r;
}

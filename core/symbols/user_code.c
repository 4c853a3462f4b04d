/* SPDX-License-Identifier: MIT */
/*
 * The user's code, defined once: whose code a resolved frame is, by the
 * one table of rules below (docs/symbols.md, "The user's code", says the
 * same in words). A site is the first frame in the user's code, so what
 * the table lists is what users do not mean by "where my program
 * allocated": the allocator with the probe, and the language runtimes'
 * own layers (the C and C++ standard libraries) between the allocator and
 * the program. A new runtime (Python's frames, say) is new rows, not new
 * code.
 */
#include <stdbool.h>
#include <string.h>

#include "cgtrace.h"
#include "export.h"

enum rule_on {
	ON_NAME,        /* the function's name is the text */
	ON_NAME_PREFIX, /* the function's name starts with the text */
	ON_FILE_DIR,    /* the frame's file path holds the text ("/include/c++/") */
	ON_MODULE,      /* the module's file name starts with the text */
};

struct code_rule {
	enum cgtrace_code code;
	enum rule_on on;
	const char *text;
};

#define ALLOC(on, text)                                                                            \
	{                                                                                          \
		CGTRACE_CODE_ALLOCATOR, on, text                                                   \
	}
#define RUNTIME(on, text)                                                                          \
	{                                                                                          \
		CGTRACE_CODE_RUNTIME, on, text                                                     \
	}

/* The first rule a frame matches says whose it is; none: the user's. */
static const struct code_rule code_rules[] = {
    /* The probe: it drops its own frames, but a frame of it is never a site. */
    ALLOC(ON_MODULE, "libcgprobe.so"),
    /* The C allocator and glibc's internal names of it. */
    ALLOC(ON_NAME, "malloc"),
    ALLOC(ON_NAME, "calloc"),
    ALLOC(ON_NAME, "realloc"),
    ALLOC(ON_NAME, "reallocarray"),
    ALLOC(ON_NAME, "free"),
    ALLOC(ON_NAME, "memalign"),
    ALLOC(ON_NAME, "aligned_alloc"),
    ALLOC(ON_NAME, "posix_memalign"),
    ALLOC(ON_NAME, "valloc"),
    ALLOC(ON_NAME, "pvalloc"),
    ALLOC(ON_NAME, "__libc_malloc"),
    ALLOC(ON_NAME, "__libc_calloc"),
    ALLOC(ON_NAME, "__libc_realloc"),
    ALLOC(ON_NAME, "__libc_memalign"),
    ALLOC(ON_NAME, "__libc_valloc"),
    ALLOC(ON_NAME, "__libc_pvalloc"),
    ALLOC(ON_NAME, "__posix_memalign"),
    /* Copies that allocate for their caller. */
    ALLOC(ON_NAME, "strdup"),
    ALLOC(ON_NAME, "strndup"),
    ALLOC(ON_NAME, "__strdup"),
    ALLOC(ON_NAME, "__strndup"),
    /* operator new and new[], all their overloads (nothrow, align_val_t), mangled and not. */
    ALLOC(ON_NAME_PREFIX, "_Znwm"),
    ALLOC(ON_NAME_PREFIX, "_Znam"),
    ALLOC(ON_NAME_PREFIX, "_Znwj"),
    ALLOC(ON_NAME_PREFIX, "_Znaj"),
    ALLOC(ON_NAME_PREFIX, "operator new"),
    /*
     * Runtimes' own allocation layers, whose callers are the sites users
     * mean: CPython's allocator API (and its internal names), and the CPU
     * allocator under every PyTorch tensor.
     */
    ALLOC(ON_NAME, "PyMem_Malloc"),
    ALLOC(ON_NAME, "PyMem_Calloc"),
    ALLOC(ON_NAME, "PyMem_Realloc"),
    ALLOC(ON_NAME, "PyMem_RawMalloc"),
    ALLOC(ON_NAME, "PyMem_RawCalloc"),
    ALLOC(ON_NAME, "PyMem_RawRealloc"),
    ALLOC(ON_NAME, "PyObject_Malloc"),
    ALLOC(ON_NAME, "PyObject_Calloc"),
    ALLOC(ON_NAME, "PyObject_Realloc"),
    ALLOC(ON_NAME_PREFIX, "_PyMem_Raw"),
    ALLOC(ON_NAME_PREFIX, "_PyObject_Malloc"),
    ALLOC(ON_NAME_PREFIX, "_PyObject_Calloc"),
    ALLOC(ON_NAME_PREFIX, "_PyObject_Realloc"),
    ALLOC(ON_NAME_PREFIX, "pymalloc_"),
    ALLOC(ON_NAME_PREFIX, "c10::alloc_cpu"),
    /* The CUDA runtime's and driver's allocation calls. */
    ALLOC(ON_NAME_PREFIX, "cudaMalloc"),
    ALLOC(ON_NAME_PREFIX, "cudaHostAlloc"),
    ALLOC(ON_NAME_PREFIX, "cuMemAlloc"),
    ALLOC(ON_NAME_PREFIX, "cuMemHostAlloc"),
    ALLOC(ON_NAME_PREFIX, "cuMemCreate"),
    /*
     * The C++ standard library: its containers, strings and allocator
     * templates, inlined into the program (told by name, or by the
     * headers their code is in when a name is not qualified, as a
     * template instantiated with a lambda is not) or in the library
     * itself; the C++ ABI runtime (exceptions) and the unwinder. Mangled
     * names too, for a reader without a demangler.
     */
    RUNTIME(ON_NAME_PREFIX, "std::"),
    RUNTIME(ON_NAME_PREFIX, "__gnu_cxx::"),
    RUNTIME(ON_NAME_PREFIX, "__cxxabiv1::"),
    RUNTIME(ON_NAME_PREFIX, "__cxa_"),
    RUNTIME(ON_NAME_PREFIX, "_ZNSt"),
    RUNTIME(ON_NAME_PREFIX, "_ZNKSt"),
    RUNTIME(ON_NAME_PREFIX, "_ZSt"),
    RUNTIME(ON_NAME_PREFIX, "_ZN9__gnu_cxx"),
    RUNTIME(ON_NAME_PREFIX, "_ZNK9__gnu_cxx"),
    RUNTIME(ON_FILE_DIR, "/include/c++/"),
    RUNTIME(ON_MODULE, "libstdc++.so"),
    RUNTIME(ON_MODULE, "libc++.so"),
    RUNTIME(ON_MODULE, "libc++abi.so"),
    RUNTIME(ON_MODULE, "libgcc_s.so"),
    /*
     * The C library and the dynamic loader: stdio's buffers, locales,
     * dlopen's and pthread_create's allocations are their callers'.
     */
    RUNTIME(ON_MODULE, "libc.so"),
    RUNTIME(ON_MODULE, "ld-linux"),
    RUNTIME(ON_MODULE, "libpthread.so"),
    RUNTIME(ON_MODULE, "libdl.so"),
    RUNTIME(ON_MODULE, "libc.musl"),
    RUNTIME(ON_MODULE, "ld-musl"),
    RUNTIME(ON_NAME_PREFIX, "__libc_start_"),
    RUNTIME(ON_NAME, "_start"),
    /*
     * Python's (docs/python-frames.md): the standard library and installed
     * packages (lib/pythonX.Y/, Debian's /usr/lib/python3/dist-packages,
     * any site-packages), the frozen modules of the import system, the
     * probe's marks. The interpreter's own evaluation loop in the native
     * frames is the Python frames it runs.
     */
    RUNTIME(ON_FILE_DIR, "/lib/python3"),
    RUNTIME(ON_FILE_DIR, "/site-packages/"),
    RUNTIME(ON_FILE_DIR, "/dist-packages/"),
    RUNTIME(ON_FILE_DIR, "<frozen "),
    RUNTIME(ON_NAME_PREFIX, "<outer Python frames"),
    RUNTIME(ON_NAME_PREFIX, "<Python frame not"),
    RUNTIME(ON_NAME, "_PyEval_EvalFrameDefault"),
};

/* True where "operator" at p is the keyword, not part of a longer name. */
static bool operator_at(const char *name, const char *p)
{
	static const char kw[] = "operator";
	if (strncmp(p, kw, sizeof(kw) - 1) != 0)
		return false;
	char after = p[sizeof(kw) - 1];
	bool ident_after = after == '_' || (after >= 'a' && after <= 'z') ||
	                   (after >= 'A' && after <= 'Z') || (after >= '0' && after <= '9');
	return !ident_after && (p == name || p[-1] == ':' || p[-1] == ' ');
}

/*
 * Where a function's qualified name starts: after the return type a
 * demangled template function begins with (`void std::vector<...>::
 * _M_realloc_insert<>(...)`, `Widget& std::vector<...>::emplace_back<>()`),
 * which is the last space outside brackets before the parameters or an
 * operator's name; after glibc's `__GI_` prefix of its hidden aliases.
 */
static const char *qualified_name(const char *name)
{
	const char *start = name;
	int depth = 0;
	for (const char *p = name; *p; p++) {
		if (depth == 0 && (*p == '(' || operator_at(name, p)))
			break;
		if (*p == '<' || *p == '(' || *p == '[' || *p == '{')
			depth++;
		else if ((*p == '>' || *p == ')' || *p == ']' || *p == '}') && depth > 0)
			depth--;
		else if (*p == ' ' && depth == 0)
			start = p + 1;
	}
	return strncmp(start, "__GI_", 5) == 0 ? start + 5 : start;
}

static bool rule_matches(const struct code_rule *r, const struct cgtrace_frame *f, const char *name,
                         const char *module)
{
	switch (r->on) {
	case ON_NAME:
		return name && strcmp(name, r->text) == 0;
	case ON_NAME_PREFIX:
		return name && strncmp(name, r->text, strlen(r->text)) == 0;
	case ON_FILE_DIR:
		return f->file && strstr(f->file, r->text);
	case ON_MODULE:
		return module && strncmp(module, r->text, strlen(r->text)) == 0;
	}
	return false;
}

CG_EXPORT enum cgtrace_code cgtrace_frame_code(const struct cgtrace_frame *f)
{
	const char *name = f->function ? qualified_name(f->function) : NULL;
	const char *module = f->module ? strrchr(f->module, '/') : NULL;
	module = module ? module + 1 : f->module;
	for (size_t i = 0; i < sizeof(code_rules) / sizeof(code_rules[0]); i++)
		if (rule_matches(&code_rules[i], f, name, module))
			return code_rules[i].code;
	return CGTRACE_CODE_USER;
}

CG_EXPORT bool cgtrace_module_may_be_user_code(const char *path)
{
	const char *module = path ? strrchr(path, '/') : NULL;
	module = module ? module + 1 : path;
	for (size_t i = 0; module && i < sizeof(code_rules) / sizeof(code_rules[0]); i++)
		if (code_rules[i].on == ON_MODULE && rule_matches(&code_rules[i], NULL, NULL, module))
			return false;
	return true;
}

CG_EXPORT bool cgtrace_frame_is_allocator(const struct cgtrace_frame *f)
{
	return cgtrace_frame_code(f) == CGTRACE_CODE_ALLOCATOR;
}

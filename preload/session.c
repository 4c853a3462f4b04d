/* SPDX-License-Identifier: MIT */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "capture.h"
#include "clock.h"
#include "device.h"
#include "encoding.h"
#include "inherit.h"
#include "jobfile.h"
#include "live.h"
#include "meta.h"
#include "modules.h"
#include "options.h"
#include "out.h"
#include "outpath.h"
#include "process.h"
#include "resident.h"
#include "ring.h"
#include "spans.h"
#include "stack_intern.h"
#include "stack.h"
#include "state.h"
#include "thread.h"
#include "updates.h"
#include "wallclock.h"
#include "warn.h"
#include "writer.h"

static struct cg_out out;
static char path[PATH_MAX];
/* CGPROBE_TEST_JSONL_COPY: the JSONL of a compact trace's records, for tests. */
static struct cg_out copy = {.fd = -1};
static char copy_path[PATH_MAX];
static bool compact;
/* The trace's encoder: compact, JSONL, or the tee that writes the copy too. */
static const struct cg_encoder_ops *enc;
static pid_t owner;
static struct cg_meta_origin origin; /* forked_from and cgprobe_inherited */
/* The trace's time 0 on the other clocks: the session's start, or a window's begin. */
static struct cg_wallclock wall;
static unsigned next_seq;
static atomic_int ended;
/* The trace is a regular file this session created (not a FIFO or device): that one. */
static bool own_file;
static dev_t own_dev;
static ino_t own_ino;
/* Before an exec the trace held nothing but its head: it was closed (and removed). */
static bool dropped;
/* A fork child's session: it keeps the live table it inherited (cg_session_fork_child). */
static bool forking;
/* The writer was held for the fork: the table the child inherits is whole. */
static bool fork_whole;
/*
 * How long a fork waits for the writer to stand still. It answers within
 * microseconds unless it is busy for long where it cannot stop (a live
 * table doubling, a starved CPU); the fork then goes on without it and
 * the child's trace says its inherited blocks are missing. 100 ms ran out
 * in the fork-storm test (200 forks, 2 threads allocating) in 2 of 7
 * runs of the whole suite on 2 cores, where the storm's own children
 * crowd the writer off the CPU: a real overloaded machine looks the same.
 * Half a second bounds a fork's delay behind a writer that never runs.
 */
#define FORK_HOLD_MS 500
#define STR(x) #x
#define XSTR(x) STR(x)
/* CGPROBE_CAPTURE=update: the head waits for the window; this one if it never comes. */
static bool head_later;
static struct cg_buf unreached_head;
/* The head being written is the window's own (cgprobe_capture_reached yes). */
static bool reached;

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool is_stream(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

/*
 * One line per trace: its absolute path when created, "-" and the path
 * when it was removed again; for a trace that could not be made, "!" and
 * the warning printed on stderr, or "?" and the warning CGPROBE_QUIET kept
 * back, so the wrapper tells a failed trace from a probe that never loaded;
 * "~" and the path of a fork child's trace that lacks its inherited blocks
 * (cgprobe_inherited partial), which the wrapper names however many traces
 * it summarises (paths start with '/', so none of these can be one).
 */
static void append_manifest(const char *prefix, const char *text)
{
	if (!cg_opt.manifest)
		return;
	int fd = open(cg_opt.manifest, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return;
	char line[PATH_MAX + 256];
	size_t k = strlen(prefix), n = strlen(text);
	if (n > sizeof(line) - 1 - k)
		n = sizeof(line) - 1 - k;
	memcpy(line, prefix, k);
	memcpy(line + k, text, n);
	line[k + n] = '\n';
	/* One write: O_APPEND keeps the lines of processes writing at once whole. */
	(void)!write(fd, line, k + n + 1);
	close(fd);
}

/* A trace not made: the warning, on stderr and in the manifest. */
static void start_failed(const char *what, const char *name, int err)
{
	char msg[PATH_MAX + 200];
	snprintf(msg, sizeof(msg), "%s%s: %s; not recording, the program goes on", what, name,
		 strerror(-err));
	cg_warn(msg, NULL);
	append_manifest(cg_warn_quiet ? "?" : "!", msg);
}

/*
 * The trace's descriptor moves far from the low numbers programs reuse: a
 * program that closes descriptors it did not open and then opens its own
 * file must not get ours and have trace lines written into it.
 */
static int move_high(int fd)
{
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 900);
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

/*
 * The trace file again, by its path, once the program closed our
 * descriptor (out.h): only the very file created, never one put in its place.
 */
static int reopen_trace(void)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != own_dev || st.st_ino != own_ino) {
		close(fd);
		return -ESTALE;
	}
	return move_high(fd);
}

/*
 * The meta record and s1 go out at once: even a process killed right away
 * leaves them. In compact mode they are the first block after the header.
 */
static void format_head(struct cg_buf *b)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	origin.capture_reached = !cg_opt.capture_update ? NULL : reached ? "yes" : "no";
	cg_meta_format(b, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec, &origin);
}

/* The head's lines into the trace (and the copy), through the encoder already open. */
static int put_head(const struct cg_buf *b)
{
	if (b->err)
		return b->err;
	enc->text(b->p, b->len);
	return enc->flush();
}

/*
 * With CGPROBE_CAPTURE=update the meta record waits for the window (its
 * time is the window's); the one saying it never came is made now, as the
 * end may come in a signal handler.
 */
static int write_head(void)
{
	int r = 0;
	enc = cg_encoding_open(&out, compact, copy.fd >= 0 ? &copy : NULL, cg_opt.flush_ms,
			      cg_opt.stats, &r);
	if (!enc)
		return r;
	if (head_later) {
		unreached_head.len = 0;
		reached = false;
		format_head(&unreached_head);
		return unreached_head.err;
	}
	struct cg_buf b = {0};
	format_head(&b);
	r = put_head(&b);
	cg_buf_fini(&b);
	return r;
}

/* The writer parked: the head goes out now. */
static int head_now(const struct cg_buf *b)
{
	int r = put_head(b);
	head_later = false;
	cg_writer_head_written();
	return r;
}

/*
 * The capture window begins (capture.c calls it): the writer parked, the
 * head goes out with the window's time as t=0, then the snapshot.
 */
static int window_open(void)
{
	uint32_t ticket;
	if (!head_later || getpid() != owner)
		return -EINVAL;
	if (cg_writer_hold(CG_PARK_ROUND, 5000, &ticket) < 0)
		return -ETIMEDOUT;
	struct cg_buf b = {0};
	reached = true;
	/* The window's time 0, which its head anchors, before its snapshot (writer.h). */
	uint64_t base = cg_clock_now();
	cg_wallclock_read(&wall, cg_clock_origin + base);
	format_head(&b);
	int r = head_now(&b);
	cg_buf_fini(&b);
	if (r == 0)
		cg_writer_window_begin(base);
	cg_writer_release(ticket);
	if (r < 0) {
		cg_warn("cannot write trace ", path, ": ", strerror(-r),
			"; recording stopped, the program goes on", NULL);
		cg_recording_stop();
	}
	return r;
}

/* The window never came: the trace says so (cgprobe_capture_reached no). */
static void head_unreached(void)
{
	uint32_t ticket;
	if (!head_later || cg_writer_hold(CG_PARK_ROUND, 5000, &ticket) < 0)
		return;
	head_now(&unreached_head);
	cg_writer_release(ticket);
}

/*
 * The figures a trace ends with (docs/probe.md, "The probe's own memory"),
 * on the writer thread after its last drain: the probe's own memory is
 * what it mapped itself (the rings, the threads' stack caches, the live
 * table, the writer's stack tree, the encoder's buffers and tables);
 * libunwind's caches and the unwind tables it reads are the process's.
 */
static void end_figures(struct cg_enc_end *v)
{
	struct cg_intern_stats is;
	struct cg_enc_stats es = {0};
	cg_intern_stats(&is);
	enc->stats(&es);
	uint64_t rings = 0, caches = 0;
	for (struct cg_ring *r = cg_rings_first(); r; r = r->next) {
		rings += cg_resident(r, sizeof(*r));
		caches += cg_resident(r->stacks, cg_stack_cache_len(r->stacks));
	}
	v->stacks = is.resident + caches;
	v->probe = rings + caches + cg_live_resident() + is.resident + es.resident;
	v->peak_rss = cg_peak_rss();
}

/* The test-only copy, named from its template as the trace is; trouble leaves it out. */
static void open_copy(void)
{
	int fd;
	copy.fd = -1;
	copy_path[0] = '\0';
	if (!compact || !cg_opt.test_jsonl_copy)
		return;
	if (cg_outpath_create(cg_opt.test_jsonl_copy, cg_process.exe_name, next_seq - 1, copy_path,
			      sizeof(copy_path), &fd) < 0) {
		cg_warn("cannot create ", cg_opt.test_jsonl_copy, NULL);
		copy_path[0] = '\0';
		return;
	}
	cg_out_open(&copy, move_high(fd), false);
}

void cg_session_start(pid_t parent)
{
	int fd, r;
	struct stat st;
	cg_clock_start();
	cg_wallclock_read(&wall, cg_clock_origin);
	cg_device_session_start();
	cg_stack_session_start();
	owner = getpid();
	/*
	 * A fork child's trace holds what it inherited, unless the fork could
	 * not wait for the writer. A session after a failed exec (forked_from
	 * kept) starts recording then, as any session does: no claim either way.
	 */
	origin = (struct cg_meta_origin){
	    parent, !forking ? NULL : fork_whole ? "complete" : "partial", NULL, &wall};
	dropped = false;
	cg_capture_session_start(window_open);
	head_later = cg_capture_state() == CG_CAPTURE_WAITING;
	atomic_store(&ended, 0);
	r = cg_outpath_create(cg_opt.output, cg_process.exe_name, next_seq++, path, sizeof(path),
			      &fd);
	if (r < 0) {
		start_failed("cannot create trace ", path[0] ? path : cg_opt.output, r);
		atomic_store(&cg_state, CG_OFF);
		return;
	}
	fd = move_high(fd);
	/* Only a regular file is created here; FIFOs and devices are opened as found. */
	own_file = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	own_dev = own_file ? st.st_dev : 0;
	own_ino = own_file ? st.st_ino : 0;
	compact = cg_options_format(path, is_stream(fd)) == CG_FORMAT_COMPACT;
	cg_opt.trace_format = compact ? CG_FORMAT_COMPACT : CG_FORMAT_JSONL;
	r = cg_out_open(&out, fd, !compact && ends_with(path, ".zst"));
	out.timed = cg_opt.stats;
	out.reopen = own_file ? reopen_trace : NULL;
	open_copy();
	if (r == 0)
		r = write_head();
	/*
	 * A fork child's trace starts with what it inherited, once it makes an
	 * allocation of its own; before a window, only the live table is kept.
	 */
	uint8_t gate = head_later ? CG_GATE_WINDOW : forking ? CG_GATE_FIRST_ALLOC : CG_GATE_OPEN;
	struct cg_writer_opts wo = {enc,  path,       cg_stack_depth != 0,     cg_opt.stats,
				    gate, head_later, forking && fork_whole, end_figures};
	if (r == 0)
		r = cg_writer_start(&out, &wo);
	if (r < 0) {
		start_failed("cannot write trace ", path, r);
		cg_out_close(&out);
		if (copy.fd >= 0)
			cg_out_close(&copy);
		atomic_store(&cg_state, CG_OFF);
		return;
	}
	append_manifest("", path);
	if (cg_opt.job && own_file)
		cg_job_trace_made(path, origin.forked_from, wall.realtime_ns);
	if (origin.inherited && strcmp(origin.inherited, "partial") == 0)
		append_manifest("~", path);
	/* The modules loaded so far, for the trace's first memory record (docs/stacks.md). */
	if (cg_stack_depth)
		cg_modules_announce(true);
	atomic_store(&cg_state, CG_RECORDING);
}

static void unlink_own_file(void);

void cg_session_end(int timeout_ms)
{
	/* vfork children share our memory but are not the session's process. */
	if (getpid() != owner)
		return;
	/* A fork child that made no allocation of its own leaves no file, as before an exec. */
	bool child = origin.forked_from != 0 && own_file;
	if (atomic_exchange(&ended, 1)) {
		/*
		 * The end is under way already, on a path a fatal signal may have
		 * interrupted (a pool's worker in _exit, terminated by its parent):
		 * the writer finishes on its own thread; die only once it has.
		 */
		cg_writer_wait_finished(timeout_ms);
		if (child && cg_writer_dropped())
			unlink_own_file();
		return;
	}
	cg_updates_session_end();
	int was = atomic_exchange(&cg_state, CG_STOPPED);
	if (was == CG_OFF)
		return;
	head_unreached();
	cg_writer_request(CG_REQ_FINISH | (child ? CG_REQ_DROP_EMPTY : 0), timeout_ms);
	if (child && cg_writer_dropped())
		unlink_own_file();
}

/*
 * The trace file, if still the one this session created, goes, and the
 * manifest says so. One that cannot go stays a complete trace: the writer
 * closed its root span before the file.
 */
static void unlink_own_file(void)
{
	struct stat st;
	if (!own_file || lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != own_dev ||
	    st.st_ino != own_ino || unlink(path) < 0)
		return;
	append_manifest("-", path);
	if (cg_opt.job)
		cg_job_trace_removed();
	/* The copy of a removed trace goes with it (the writer closed it). */
	if (copy_path[0])
		unlink(copy_path);
}

/*
 * A process that recorded nothing before an exec (a fork child on its way
 * to exec) leaves no file: the program it becomes writes its own trace.
 * Any other trace stays, its root span closed, in case the exec fails.
 */
void cg_session_before_exec(void)
{
	/* A vfork child runs in our memory on its way to exec: the session is not its own. */
	if (getpid() != owner || !cg_recording())
		return;
	head_unreached();
	int req = CG_REQ_CLOSE_ROOT | (own_file ? CG_REQ_DROP_EMPTY : 0);
	/* Late (timed out), the writer may drop the file still; it then stops recording. */
	if (cg_writer_request(req, 5000) < 0 || !cg_writer_dropped())
		return;
	dropped = true;
	unlink_own_file();
}

void cg_session_exec_failed(void)
{
	if (getpid() != owner || !dropped)
		return;
	/* Events other threads pushed after the last drain belong to the dropped trace. */
	cg_rings_drop_pending();
	/* The clock starts again: this thread's stamps must not stay ahead of it. */
	cg_self.last_ts = 0;
	cg_session_start(origin.forked_from);
}

/*
 * Hooks hold no lock, so fork needs nothing taken beforehand; the writer
 * is held, so that the child inherits a live table no change is amid.
 * Per thread: threads may fork at once, each with a hold in turn.
 */
void cg_session_fork_prepare(void)
{
	cg_self.guard++;
	cg_self.fork_held = cg_recording() &&
			    cg_writer_hold(CG_PARK_FORK, FORK_HOLD_MS, &cg_self.fork_ticket) == 0;
}

/* Once per process, in the parent: a fork that could not wait for the writer. */
static void warn_partial(void)
{
	static bool warned;
	if (warned)
		return;
	warned = true;
	cg_warn("fork: the trace writer did not answer within " XSTR(FORK_HOLD_MS)
		" ms; the child's trace lacks the blocks it inherited (cgprobe_inherited partial)",
		NULL);
}

void cg_session_fork_parent(void)
{
	if (cg_self.fork_held)
		cg_writer_release(cg_self.fork_ticket);
	else if (cg_recording() && cg_opt.follow)
		warn_partial();
	cg_self.fork_held = false;
	cg_self.guard--;
}

void cg_session_fork_child(void)
{
	int saved = errno;
	bool was_recording = cg_recording();
	bool whole = cg_self.fork_held;
	/* What the parent's writer had not applied yet is in the rings: the table takes it. */
	if (whole)
		cg_inherit_pending();
	cg_rings_reset_after_fork(cg_self.ring);
	/* The parent's file and writer thread are not ours: drop them unflushed. */
	cg_writer_forget();
	cg_encoding_forget();
	if (atomic_load(&cg_state) != CG_OFF && out.fd >= 0)
		close(out.fd);
	out.fd = -1;
	if (copy.fd >= 0)
		close(copy.fd);
	copy.fd = -1;
	cg_spans_after_fork();
	cg_updates_after_fork();
	cg_self.last_ts = 0;
	atomic_store(&cg_state, CG_OFF);
	pid_t parent = getppid();
	/* A child of an update whose window has ended has nothing to record. */
	if (was_recording && cg_opt.follow && cg_capture_state() != CG_CAPTURE_DONE) {
		forking = true;
		fork_whole = whole;
		cg_session_start(parent);
		forking = false;
	}
	cg_self.fork_held = false;
	cg_self.guard--;
	errno = saved;
}
